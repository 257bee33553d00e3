// SPDX-License-Identifier: MIT
// The Coexisting-Facts lexicon: categories, preferences, statement templates and scenario questions.
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/coexisting_lexicon.hpp>

#include <set>

namespace memfail::suites::memfail_suite::coexisting {

namespace {

// Preferences are written compactly as "canonical[=phrase][+][;variant...]": `phrase` is the form
// used in sentences (defaults to the canonical one), '+' marks it plural, and the ';'-separated
// extras are further accepted phrasings.
struct RawCategory {
    const char* name;
    const char* label;
    std::vector<const char*> preferences;
    std::vector<const char*> statements;
    std::vector<const char*> questions;
    bool general = true;
};

Preference parse_preference(const std::string& spec) {
    std::vector<std::string> parts = text::split(spec, ';');
    std::string head = parts[0];
    Preference p;
    if (!head.empty() && head.back() == '+') {
        p.plural = true;
        head.pop_back();
    }
    const std::size_t eq = head.find('=');
    p.canonical = head.substr(0, eq);
    p.phrase = eq == std::string::npos ? p.canonical : head.substr(eq + 1);
    std::set<std::string> seen;
    auto add = [&](const std::string& v) {
        if (seen.insert(text::normalize(v)).second) p.variants.push_back(v);
    };
    add(p.canonical);
    add(p.phrase);
    // "the cello" is also accepted as "cello"; the canonical form already covers it.
    for (std::size_t i = 1; i < parts.size(); ++i) add(parts[i]);
    return p;
}

const std::vector<RawCategory>& raw_categories() {
    static const std::vector<RawCategory> k_raw = {
        // ---- Food & drink ----
        {"foods", "foods",
         {"ramen", "tacos+", "dumplings+", "sushi", "lasagna", "pad thai", "fried chicken", "paella"},
         {"If I'm choosing what to have for dinner, I'm usually craving {p}.",
          "I could eat {p} several times a week without getting bored.",
          "Put {p} in front of me and I'm a happy person."},
         {"I'm planning a week of dinners and want every night to feature something I love. Which dishes "
          "should go on the menu?",
          "My partner is cooking a birthday feast for me and asked which foods I'd be happiest to see on the "
          "table. What should I tell them?"}},
        {"cuisines", "cuisines",
         {"Thai food;Thai cuisine", "Ethiopian food;Ethiopian cuisine", "Mexican food;Mexican cuisine",
          "Korean food;Korean cuisine", "Lebanese food;Lebanese cuisine", "Peruvian food;Peruvian cuisine",
          "Vietnamese food;Vietnamese cuisine", "Italian food;Italian cuisine"},
         {"When friends ask where to eat, I almost always suggest {p}.",
          "I've been cooking a lot of {p} at home lately because I love it so much.",
          "{P} {is} my comfort food whenever I eat out."},
         {"We're starting a monthly dinner club and each month should feature a cuisine I enjoy. Which "
          "cuisines belong on the schedule?",
          "A new food hall opened near me with stalls from all over the world. Which stalls should I make "
          "sure to visit so I try everything I like?"}},
        {"types of desserts", "desserts",
         {"cheesecake", "tiramisu", "brownies+", "key lime pie", "apple crumble", "chocolate mousse",
          "panna cotta", "churros+"},
         {"I always save room for dessert if {p} {is} on the menu.",
          "{P} {is} my idea of a perfect way to end a meal.",
          "Whenever I pass a good bakery, I'm tempted to pick up {p}."},
         {"I'm setting up a dessert table for my birthday and want every sweet I love on it. What should I "
          "make sure is there?",
          "A bakery is letting me build a custom sampler box. Which desserts should I ask them to include?"}},
        {"drinks", "drinks",
         {"lemonade", "iced tea", "sparkling water", "kombucha", "hot chocolate", "ginger ale", "horchata",
          "orange juice;fresh orange juice"},
         {"When I want something other than plain water, I usually reach for {p}.",
          "I almost always have {p} somewhere in my kitchen.",
          "{P} {is} my kind of treat on a lazy afternoon."},
         {"I'm stocking the drinks cooler for a get-together at my place and want everything I personally "
          "like in there. What should I buy?",
          "I'm putting in a grocery order for the week. Which drinks should I add so all my favorites are at "
          "home?"}},
        {"coffee types", "coffee drinks",
         {"espresso", "cappuccino=cappuccinos+", "flat white=flat whites+", "cold brew", "cortado=cortados+",
          "mocha=mochas+", "americano=americanos+", "latte=lattes+"},
         {"A good café can win me over with {p}.",
          "On a slow morning, I'm happy to wait in line for {p}.",
          "I judge a coffee shop by how well it makes {p}."},
         {"I'm setting up a little coffee bar at home and want to be able to make every coffee drink I "
          "enjoy. What should I plan to make?",
          "My friend is opening a café and asked which drinks would keep me coming back. What should be on "
          "her menu for me?"}},
        {"tea varieties", "teas",
         {"green tea", "chai", "oolong", "Earl Grey", "chamomile;chamomile tea", "jasmine tea", "rooibos",
          "matcha"},
         {"I always keep {p} in the cupboard for quiet afternoons.",
          "A cup of {p} is how I like to wind down.",
          "{P} {is} what I brew when I need a moment to myself."},
         {"I'm filling a tea tin for my desk at work. Which teas should go in it so every kind I like is "
          "covered?",
          "A tea shop is doing a build-your-own sampler. Which teas should I pick so nothing I enjoy is left "
          "out?"}},
        {"breakfast foods", "breakfast foods",
         {"pancakes+", "waffles+", "oatmeal", "eggs Benedict", "avocado toast", "French toast", "shakshuka",
          "breakfast burritos+;breakfast burrito"},
         {"On a lazy weekend morning, I love making {p}.",
          "{P} {is} a great way to start a slow day, in my book.",
          "If a café serves {p}, I'm ordering it."},
         {"Friends are staying over for a long weekend and I want each breakfast to be something I love. "
          "What should I plan to cook?",
          "I'm ordering brunch for a group and want all of my own favorites included. Which dishes should I "
          "get?"}},
        {"street foods", "street foods",
         {"empanadas+", "falafel", "bao buns+", "arepas+", "banh mi", "samosas+", "crepes+", "elote"},
         {"When I see a stall selling {p}, I almost always stop.",
          "I'll walk the whole length of a night market to find {p}.",
          "{P} {is} my kind of food to eat on the go."},
         {"There's a street food festival downtown this weekend. Which stalls should I look for so I get "
          "everything I like?",
          "I'm hiring a few food trucks for a backyard party and want all my favorite street foods covered. "
          "What should the trucks be serving?"}},
        {"snack types", "snacks",
         {"popcorn", "trail mix", "pretzels+", "seaweed snacks+", "rice crackers+", "dried mango",
          "roasted chickpeas+", "dark chocolate"},
         {"{P} {is} what I grab when I get peckish in the afternoon.",
          "I always keep {p} in my desk drawer.",
          "I tend to snack on {p} while I work."},
         {"I'm packing snacks for a long road trip and want all my favorites along. What should I bring?",
          "I'm filling a snack basket for my desk at work. What should go in it?"}},
        {"cocktail types", "cocktails",
         {"margarita=margaritas+", "mojito=mojitos+", "negroni=negronis+", "old fashioned=old fashioneds+",
          "espresso martini=espresso martinis+", "daiquiri=daiquiris+", "paloma=palomas+",
          "whiskey sour=whiskey sours+"},
         {"{P} {is} usually what I order when I'm out for drinks.",
          "Nobody has to twist my arm to order {p}.",
          "I've spent a while learning to make really good {p} at home."},
         {"I'm hosting a cocktail hour and only want to mix drinks I actually like. What should I plan to "
          "make?",
          "I'm writing a small drinks menu for my housewarming. Which cocktails belong on it?"}},
        {"cooking methods", "cooking methods",
         {"grilling", "slow cooking", "stir-frying", "baking", "roasting", "braising", "fermenting",
          "smoking meat"},
         {"Give me a free afternoon and I'll happily spend it {p}.",
          "In the kitchen, {p} {is} the kind of cooking I enjoy.",
          "I find {p} really satisfying."},
         {"I'm planning a weekend cooking project and want it to use every technique I enjoy. Which methods "
          "should it involve?",
          "I'm shopping for new kitchen equipment and want to support every way I like to cook. What should "
          "I be buying for?"}},
        {"restaurant types", "kinds of restaurants",
         {"ramen bar=ramen bars+", "taqueria=taquerias+", "dim sum parlor=dim sum parlors+",
          "steakhouse=steakhouses+", "oyster bar=oyster bars+", "vegan cafe=vegan cafes+",
          "tapas bar=tapas bars+", "diner=diners+"},
         {"When I eat out, {p} {is} usually where you'll find me.",
          "Suggest {p} for dinner and I'll say yes every time.",
          "I'm always on the lookout for good {p} in new neighborhoods."},
         {"I just moved to a new city and want to find one of each kind of place I like to eat. What should "
          "I search for?",
          "For my birthday week I want to eat out every night somewhere I'd love. What kinds of restaurants "
          "should I book?"}},

        // ---- Entertainment & media ----
        {"music genres", "music genres",
         {"jazz", "bluegrass", "hip-hop", "reggae", "synth-pop;synthpop", "classical music", "Afrobeat",
          "bossa nova"},
         {"{P} {is} usually what's playing in my headphones.",
          "I could listen to {p} all day.",
          "Put on some {p} and my mood improves instantly."},
         {"I'm making a long playlist for a road trip and want every genre I love represented. What should I "
          "include?",
          "I'm DJing my own birthday party. Which genres should make it into the mix so all my tastes show "
          "up?"}},
        {"types of movies", "kinds of movies",
         {"horror movies+;horror films", "romantic comedies+;rom-coms", "sci-fi movies+;science fiction movies",
          "animated films+;animated movies", "westerns+", "heist movies+;heist films", "war films+;war movies",
          "musicals+"},
         {"Movie night at my place usually means {p}.",
          "I never say no to {p} on a lazy evening.",
          "I've probably seen more {p} than anyone I know."},
         {"I'm planning a film marathon weekend and want a mix that covers every kind of movie I like. What "
          "should be on the list?",
          "A friend is building a movie-night queue for the two of us. What kinds of films should she add so "
          "I'm happy every night?"}},
        {"book genres", "book genres",
         {"mystery novels+;mysteries", "historical fiction", "fantasy", "poetry", "memoirs+",
          "science fiction;sci-fi", "graphic novels+", "thrillers+"},
         {"My nightstand is almost always stacked with {p}.",
          "When I'm choosing something to read, I gravitate toward {p}.",
          "I can lose a whole weekend to {p}."},
         {"I'm heading to a used-book sale with an empty tote bag. Which sections should I browse so I find "
          "something in every genre I like?",
          "I'm signing up for a book subscription that should match all my reading tastes. Which genres "
          "should I list?"}},
        {"tv show genres", "TV genres",
         {"sitcoms+", "crime dramas+", "reality competitions+;reality competition shows", "period dramas+",
          "anime", "cooking shows+", "nature documentaries+", "game shows+"},
         {"Most evenings I unwind with {p}.",
          "I'll happily binge {p} on a free weekend.",
          "{P} {is} my idea of comfort viewing."},
         {"I'm choosing streaming services and only want ones that carry the kinds of shows I watch. What "
          "should I look for?",
          "Friends want to start a weekly TV night with me. What kinds of shows should we rotate through so "
          "I'm always into it?"}},
        {"video game genres", "video game genres",
         {"platformers+", "puzzle games+", "racing games+", "role-playing games+;RPGs", "strategy games+",
          "farming sims+;farming simulators", "rhythm games+", "survival games+"},
         {"I lose track of time whenever I'm playing {p}.",
          "{P} {is} a great way for me to unwind with a controller in hand.",
          "I'm always hunting for new {p} to try."},
         {"I've got a gift card for a game store and want to pick up something in every genre I enjoy. What "
          "should I browse for?",
          "I'm planning a gaming night and want to rotate through all the kinds of games I love. What should "
          "we play?"}},
        {"podcast topics", "podcast topics",
         {"true crime", "history", "personal finance", "astronomy", "food science", "startups", "linguistics",
          "psychology"},
         {"Any podcast about {p} goes straight into my queue.",
          "I listen to a lot of shows about {p} on my commute.",
          "I love hearing experts go deep on {p}."},
         {"I want to fill my podcast queue for a long flight with shows on everything I'm into. Which topics "
          "should I search for?",
          "A friend who produces podcasts asked which topics would get me to try a brand-new show. What "
          "should I tell her?"}},
        {"comedy styles", "kinds of comedy",
         {"stand-up;stand-up comedy", "improv", "sketch comedy", "dark humor", "satire", "deadpan humor",
          "slapstick", "observational comedy"},
         {"{P} can make me laugh harder than almost anything.",
          "If a show leans into {p}, I'm already sold.",
          "I'll gladly buy tickets for a night of {p}."},
         {"I'm picking shows for a comedy festival pass. What styles should I look for so I catch everything "
          "that makes me laugh?",
          "I'm putting together a comedy night for friends and want it to reflect my sense of humor. What "
          "kinds of acts should I book?"}},
        {"documentary subjects", "documentary subjects",
         {"wildlife", "space exploration", "architecture", "ocean life", "music history", "mountaineering",
          "ancient civilizations", "food culture"},
         {"A documentary about {p} will keep me glued to the screen.",
          "I've watched more documentaries about {p} than I can count.",
          "{P} {is} a subject I could watch films about forever.",
          "I'll watch almost any documentary as long as it's about {p}.",
          "Documentaries on {p} make up a big part of my weekend viewing."},
         {"I'm making a list of documentaries to watch over the holidays and want it to cover every subject "
          "I love. What should I search for?",
          "A film club asked me to suggest themes for this season's documentary nights. Which subjects should "
          "I propose so all my interests are covered?"},
         false},
        {"types of concerts", "kinds of concerts",
         {"music festivals+;outdoor music festivals", "symphony concerts+;orchestra concerts", "acoustic sets+",
          "jazz club gigs+", "opera performances+", "punk shows+", "choir concerts+", "house concerts+"},
         {"I'd happily spend a weekend going to {p}.",
          "I always come home buzzing from {p}.",
          "I keep an eye on listings so I don't miss {p} in my area."},
         {"I'm budgeting for live music this year and want to catch every kind of show I enjoy. What should "
          "I buy tickets for?",
          "A friend wants to plan our summer around live music. What kinds of events should we look for so "
          "I'm excited about all of them?"}},
        {"types of museums", "kinds of museums",
         {"art museums+", "natural history museums+", "science museums+", "maritime museums+",
          "design museums+", "aviation museums+", "toy museums+", "open-air museums+"},
         {"When I travel, I always look for {p} to visit.",
          "I could spend an entire afternoon wandering through {p}.",
          "{P} {is} my kind of rainy-day outing."},
         {"I'm planning a rainy-day itinerary for a city trip and want to hit every kind of museum I enjoy. "
          "What should I look for?",
          "I'm buying a city pass that covers several museums. Which kinds should it include so I get my "
          "money's worth?"}},
        {"sports to watch on TV", "sports to watch",
         {"tennis", "soccer", "Formula 1;F1", "basketball", "figure skating", "rugby", "golf",
          "cycling races+"},
         {"When {p} {is} on TV, I'm usually watching.",
          "I'll happily spend a whole afternoon on the couch watching {p}.",
          "Watching {p} with friends is one of my favorite ways to spend a weekend."},
         {"I'm choosing a sports streaming package and need it to cover everything I like to watch. What "
          "should it include?",
          "I'm setting up a watch-party calendar for the year. Which sports should I keep track of so I "
          "don't miss anything I enjoy?"}},
        {"types of theater", "kinds of theater",
         {"musicals+", "Shakespeare plays+", "puppet theater", "immersive theater", "ballet",
          "one-person shows+", "dinner theater", "experimental theater"},
         {"An evening of {p} is my idea of a treat.",
          "I buy tickets to {p} whenever something good is playing.",
          "{P} {has} a special place in my heart."},
         {"I have a theater subscription to use up this season. What kinds of productions should I spend it "
          "on?",
          "A friend is visiting and wants to see a show with me each night. What kinds of performances "
          "should we look for?"}},

        // ---- Physical activity ----
        {"sports", "sports",
         {"volleyball", "badminton", "ultimate frisbee", "squash", "pickleball", "table tennis", "basketball",
          "softball"},
         {"I try to get a game of {p} in at least once a week.",
          "{P} {is} a great way for me to work up a sweat with friends.",
          "I'm always looking for people to play {p} with."},
         {"I'm joining a rec center and want to sign up for leagues in every sport I enjoy playing. Which "
          "ones should I register for?",
          "I'm packing a gear bag for a summer sports camp where I can play anything. Which sports should I "
          "pack for?"}},
        {"outdoor activities", "outdoor activities",
         {"kayaking", "rock climbing", "paddleboarding;stand-up paddleboarding", "birdwatching;bird-watching",
          "fishing", "mountain biking", "snorkeling", "geocaching"},
         {"Whenever the weather cooperates, I head out for some {p}.",
          "I feel like myself when I'm out {p}.",
          "A day spent {p} is a good day in my book."},
         {"I'm booking a week at an adventure lodge and want to schedule every outdoor activity I love. "
          "What should I sign up for?",
          "I'm writing a summer bucket list of things I enjoy doing outside. What should go on it?"}},
        {"physical exercises", "exercises",
         {"push-ups+;pushups", "deadlifts+", "squats+", "burpees+", "planks+", "lunges+", "kettlebell swings+",
          "pull-ups+;pullups"},
         {"My favorite workouts always include {p}.",
          "Strange as it sounds, I actually enjoy doing {p}.",
          "I feel strong every time I finish a set of {p}."},
         {"I'm writing a home workout plan and want it built around the exercises I enjoy. What should it "
          "include?",
          "My trainer asked which moves I like so she can design my program around them. What should I tell "
          "her?"}},
        {"fitness class types", "fitness classes",
         {"spin classes+;spin class", "Pilates", "barre", "Zumba", "HIIT classes+;HIIT", "aqua aerobics",
          "kickboxing", "boot camp classes+;boot camp"},
         {"You'll find me at {p} most weeks.",
          "I always feel great after {p}.",
          "I book {p} whenever my schedule allows."},
         {"My gym just released its new timetable. Which sessions should I put in my calendar so I don't "
          "miss any I like?",
          "I'm choosing between gym memberships and need one that offers every class I enjoy. What should I "
          "check for?"}},
        {"martial arts styles", "martial arts",
         {"judo", "karate", "Brazilian jiu-jitsu;jiu-jitsu;BJJ", "Muay Thai", "taekwondo", "capoeira",
          "aikido", "kung fu"},
         {"I've trained in {p} for a while and still love every session.",
          "A good {p} class leaves me exhausted and happy.",
          "{P} {has} taught me a lot about patience."},
         {"I'm moving to a new city and want to find a gym or dojo for every martial art I practice. What "
          "should I search for?",
          "A friend is opening a martial arts studio and asked which classes would get me to sign up. What "
          "should I tell him?"}},
        {"dance styles", "dance styles",
         {"salsa", "swing dancing;swing", "tango", "hip-hop dance", "ballroom dancing;ballroom",
          "contemporary dance", "line dancing", "flamenco"},
         {"A class in {p} is a highlight of my week.",
          "I'm always one of the first on the floor when there's {p}.",
          "I love the feeling of getting lost in {p}."},
         {"I'm looking for dance classes this fall and want to cover every style I enjoy. Which ones should "
          "I sign up for?",
          "My wedding band wants to know what kinds of dancing I'm into so they can plan the sets. What "
          "should I tell them?"}},
        {"cycling types", "kinds of cycling",
         {"road cycling", "gravel riding", "bike commuting", "track cycling", "bikepacking", "BMX",
          "mountain biking", "cyclocross"},
         {"Most weekends I'm out doing some {p}.",
          "{P} {is} a great way for me to spend time on a bike.",
          "I've put a lot of miles into {p} over the years."},
         {"I'm deciding which bikes to keep in the garage and want one for every kind of riding I enjoy. "
          "What should I plan for?",
          "A cycling club asked which of its groups I'd want to join. Which kinds of riding should I tell "
          "them about?"}},
        {"swimming styles", "swimming styles",
         {"freestyle", "backstroke", "breaststroke", "butterfly", "sidestroke", "open-water swimming",
          "synchronized swimming"},
         {"In the water, {p} just feels right to me.",
          "I could practice {p} for hours at the pool.",
          "{P} {is} a big part of why I love being in the water."},
         {"I'm booking sessions with a swim coach and want every style I enjoy worked into them. What "
          "should we practice?",
          "I'm writing myself a swim workout for the week that uses all the styles I like. What should it "
          "include?"}},
        {"types of yoga", "kinds of yoga",
         {"hot yoga", "vinyasa", "yin yoga", "hatha", "Ashtanga", "restorative yoga", "Kundalini",
          "aerial yoga"},
         {"I feel amazing after a session of {p}.",
          "I always leave {p} feeling calmer than when I arrived.",
          "{P} {has} become a regular part of my week."},
         {"I'm buying a class pack at a yoga studio and want to book every style I like. Which classes "
          "should I look for?",
          "A friend is designing a yoga retreat for our group. Which kinds should be on the schedule so I "
          "enjoy every session?"}},
        {"hiking styles", "kinds of hiking",
         {"day hiking", "backpacking", "thru-hiking", "summit hikes+", "desert hiking", "waterfall hikes+",
          "hut-to-hut trekking", "coastal walks+"},
         {"Few things clear my head like {p}.",
          "I'm always planning my next round of {p}.",
          "I've worn out more than one pair of boots on {p}."},
         {"I'm planning a year of adventures and want at least one trip for every kind of hiking I love. "
          "What should I plan?",
          "A gear store is fitting me for boots and asked what kind of hiking I do. What should I tell them "
          "so every style I enjoy is covered?"}},

        // ---- Lifestyle & personal style ----
        {"fashion styles", "fashion styles",
         {"streetwear", "minimalist fashion", "bohemian style;boho", "preppy style;preppy", "athleisure",
          "workwear", "grunge", "vintage clothing;vintage"},
         {"A lot of my closet leans toward {p}.",
          "I feel like myself when I'm dressed in {p}.",
          "I'm always saving photos of {p} for outfit ideas."},
         {"I'm doing a big wardrobe refresh and want pieces that fit every style I like to wear. What should "
          "I shop for?",
          "A personal stylist asked which looks I gravitate toward. What should I tell her?"}},
        {"home decor styles", "decor styles",
         {"mid-century modern", "Scandinavian design", "industrial decor", "farmhouse style", "Japandi",
          "maximalism", "Art Deco", "coastal decor"},
         {"My dream apartment would be full of {p}.",
          "I save every photo of {p} I come across online.",
          "{P} {is} the kind of look I want my home to have."},
         {"I'm redecorating my apartment and want each room to reflect a style I love. What should I draw "
          "from?",
          "An interior designer asked for a list of the looks I'm drawn to. What should I tell him?"}},
        {"makeup styles", "makeup looks",
         {"winged eyeliner", "bold red lips+", "natural look=a natural look", "glitter eyeshadow",
          "dewy skin", "graphic liner", "smoky eyes+;smoky eye", "bronzed glow=a bronzed glow"},
         {"When I do my makeup, I usually go for {p}.",
          "I never get tired of experimenting with {p}.",
          "I love how I look with {p}."},
         {"I'm restocking my makeup bag and want products for every look I like to wear. What should I shop "
          "for?",
          "A makeup artist is doing my makeup for several events and asked what I like. Which looks should I "
          "mention?"}},
        {"jewelry types", "kinds of jewelry",
         {"hoop earrings+", "signet rings+", "layered necklaces+", "anklets+", "charm bracelets+",
          "brooches+", "stud earrings+", "cuff bracelets+"},
         {"I almost always have {p} on when I head out.",
          "I feel put-together whenever I'm wearing {p}.",
          "I can never walk past a display of {p} without stopping."},
         {"I'm packing a small jewelry roll for a trip and want every kind of piece I like to wear. What "
          "should go in it?",
          "My partner wants to surprise me with jewelry but doesn't know my taste. What should they "
          "consider?"}},
        {"shoe styles", "shoe styles",
         {"loafers+", "Chelsea boots+", "high-top sneakers+", "espadrilles+", "ankle boots+", "Mary Janes+",
          "clogs+", "platform sandals+"},
         {"Most days you'll see me walking around in {p}.",
          "I own more {p} than I'd like to admit.",
          "I've never regretted buying {p}."},
         {"I'm clearing out my closet and want to keep a good pair in every style of shoe I love. What "
          "should I keep?",
          "I'm packing for a month abroad with room for only a few pairs. Which styles should I bring so I "
          "have my favorites?"}},
        {"hair care styles", "hair care habits",
         {"air-drying", "deep conditioning", "scalp massages+", "co-washing", "blowouts+", "hair oiling",
          "braiding"},
         {"My hair always looks its best after {p}.",
          "{P} {is} a part of my hair routine I'd never skip.",
          "I've had great results with {p}."},
         {"I'm putting together a hair care kit for a long trip and want it to support everything I like "
          "doing for my hair. What should I plan for?",
          "My new stylist asked what I enjoy in my hair routine. What should I tell her?"}},
        {"skincare routines", "skincare steps",
         {"double cleansing", "sheet masks+", "retinol", "vitamin C serum", "facial rolling", "sunscreen",
          "exfoliating", "clay masks+"},
         {"I never skip {p} in my skincare routine.",
          "My skin feels great whenever I keep up with {p}.",
          "{P} {is} a step I genuinely look forward to."},
         {"I'm restocking my bathroom shelf and want everything I need for my favorite parts of my skin "
          "routine. What should I buy?",
          "A friend asked what to include in a skincare routine I'd actually stick to. What should I tell "
          "her?"}},
        {"bag styles", "bags",
         {"tote bags+;totes", "backpacks+", "crossbody bags+", "messenger bags+", "duffel bags+",
          "belt bags+;fanny packs", "clutches+", "bucket bags+"},
         {"You'll often spot me carrying one of my {p}.",
          "I can't pass a shop window full of {p} without looking.",
          "For everyday errands, I like having one of my {p} with me."},
         {"I'm clearing out my closet and want to keep only the kinds of bags I actually love. Which ones "
          "should stay?",
          "I'm making a wishlist for a leather goods sale. Which styles should be on it so all my favorites "
          "are there?"}},
        {"hat styles", "hat styles",
         {"fedora=fedoras+", "beanie=beanies+", "bucket hat=bucket hats+", "baseball cap=baseball caps+",
          "beret=berets+", "panama hat=panama hats+", "flat cap=flat caps+", "cowboy hat=cowboy hats+"},
         {"You'll often catch me wearing one of my {p}.",
          "I feel more like myself in {p}.",
          "I can never resist trying on {p} when I'm in a shop."},
         {"I'm moving and only have room for one box of accessories. Which hats absolutely have to make the "
          "cut?",
          "My cousin runs a hat shop and offered to set aside one of every style I'd actually wear. What "
          "should she set aside?"}},

        // ---- Travel & places ----
        {"travel destinations", "destinations",
         {"Lisbon", "Kyoto", "Iceland", "Patagonia", "Marrakech", "New Zealand",
          "Amalfi Coast=the Amalfi Coast", "Vancouver"},
         {"I'd go back to {p} in a heartbeat.",
          "{P} {is} a place I could visit again and again.",
          "I still daydream about my trip to {p}."},
         {"I'm sketching out trips for the next few years and want each one to be somewhere I love. Where "
          "should I go?",
          "I'm filling a travel scrapbook with places I adore. Which destinations should get their own "
          "pages?"}},
        {"vacation types", "kinds of vacations",
         {"road trip=road trips+", "beach holiday=beach holidays+;beach vacations", "cruise=cruises+",
          "ski trip=ski trips+", "city break=city breaks+", "cabin getaway=cabin getaways+",
          "safari=safaris+", "wellness retreat=wellness retreats+"},
         {"{P} {is} my idea of a perfect break.",
          "I'm always daydreaming about my next {c}.",
          "I come back from {p} feeling like a new person."},
         {"I've got several weeks of vacation this year and want every trip to be a kind I enjoy. What "
          "should I plan?",
          "A travel agent asked which kinds of trips make me happiest. What should I tell her?"}},
        {"nature environments", "natural settings",
         {"deserts+", "rainforests+", "alpine meadows+", "rocky coastlines+", "wetlands+", "canyons+",
          "old-growth forests+", "volcanic landscapes+"},
         {"I feel at peace surrounded by {p}.",
          "A day among {p} recharges me completely.",
          "I plan a lot of my trips around {p}."},
         {"I'm choosing national parks to visit this decade and want to cover every kind of landscape I "
          "love. What should I look for?",
          "A photographer friend wants to take me somewhere I'd love in each season. What kinds of places "
          "should she pick?"}},
        {"city neighborhood types", "neighborhoods",
         {"historic districts+", "arts districts+", "waterfront neighborhoods+", "university districts+",
          "old market quarters+", "nightlife districts+", "leafy residential streets+"},
         {"When I visit a new city, I always make time for {p}.",
          "I love wandering around {p} with no plan at all.",
          "{P} {is} the kind of place I'd happily live in."},
         {"I'm apartment hunting in a new city and want to live near every type of area I love. What should "
          "I look for?",
          "I've got two free days in a city I've never visited. What kinds of areas should I explore so I "
          "see everything I like?"}},
        {"outdoor dining settings", "outdoor dining spots",
         {"rooftop terraces+", "garden patios+", "sidewalk cafes+", "beachside restaurants+",
          "lakeside decks+", "courtyard restaurants+", "food truck parks+", "riverside beer gardens+"},
         {"I'll pick {p} whenever the weather allows.",
          "Warm evenings were made for {p}, if you ask me.",
          "Some of my best meals have been at {p}."},
         {"Summer is coming and I want to eat outside somewhere I love every week. What kinds of spots "
          "should I look for?",
          "A friend is planning a summer of dinners out with me. Which outdoor settings should she book so I "
          "enjoy every one?"}},

        // ---- Hobbies & creativity ----
        {"hobbies", "hobbies",
         {"gardening", "woodworking", "knitting", "stargazing", "calligraphy", "model railroading",
          "beekeeping", "sourdough baking"},
         {"I could lose a whole Saturday to {p}.",
          "My free evenings often go to {p}.",
          "{P} {is} how I switch off after a long week."},
         {"I'm turning the spare room into a hobby space and want room for everything I love doing. What "
          "should I plan space for?",
          "My family wants to buy gifts that support my hobbies this year. Which ones should I tell them "
          "about?"}},
        {"crafts", "crafts",
         {"embroidery", "pottery", "crochet", "quilting", "candle making", "macrame", "leatherworking",
          "bookbinding"},
         {"I always have some {p} project on the go.",
          "Working on {p} helps me unwind after a busy week.",
          "My shelves are full of supplies for {p}."},
         {"I'm setting up a craft corner and want supplies for every craft I enjoy. What should I stock up "
          "for?",
          "A local maker space offers workshops in dozens of crafts. Which ones should I sign up for?"}},
        {"art styles", "art styles",
         {"impressionism", "surrealism", "pop art", "abstract expressionism", "ukiyo-e", "Art Nouveau",
          "street art", "minimalist art"},
         {"I could stand in front of {p} for ages at a gallery.",
          "Prints of {p} cover a lot of my walls.",
          "{P} {has} always spoken to me."},
         {"I'm planning a gallery-hopping weekend and want to see work in every style I love. What should I "
          "look for?",
          "I'm choosing prints to hang around my new place. Which styles should I browse so they all reflect "
          "my taste?"}},
        {"photography styles", "kinds of photography",
         {"street photography", "portrait photography", "landscape photography", "macro photography",
          "film photography", "astrophotography", "black-and-white photography", "food photography"},
         {"I'm in my element behind the camera doing {p}.",
          "I spend a lot of weekends on {p}.",
          "My camera roll is packed with {p}."},
         {"I'm choosing lenses and gear for the year and want to cover every kind of photography I enjoy. "
          "What should I plan for?",
          "A photo workshop lets me pick several tracks. Which ones should I choose so every kind of photography I "
          "love is covered?"}},
        {"creative writing styles", "kinds of writing",
         {"poetry", "flash fiction", "screenplays+", "personal essays+", "song lyrics+", "fan fiction",
          "haiku", "short stories+"},
         {"I get a real thrill out of writing {p}.",
          "When I sit down to write, I often end up working on {p}.",
          "I've filled notebooks with {p} over the years."},
         {"I'm going on a writing retreat with optional workshops. Which ones should I attend to cover "
          "everything I like writing?",
          "I'm setting up a notebook for each kind of writing I enjoy. What should each one be for?"}},
        {"musical instruments", "instruments",
         {"cello=the cello", "ukulele=the ukulele", "piano=the piano", "drums=the drums+",
          "harmonica=the harmonica", "banjo=the banjo", "violin=the violin", "saxophone=the saxophone"},
         {"I love playing {p} whenever I get a quiet hour.",
          "I've been teaching myself {p} and I'm loving it.",
          "I could practice {p} for hours without noticing the time."},
         {"I'm converting a closet into a tiny music room. Which instruments do I need space for so I can "
          "play everything I enjoy?",
          "A music shop is offering discounted lessons. Which instruments should I sign up for?"}},
        {"types of puzzles", "puzzles",
         {"crosswords+", "sudoku", "jigsaw puzzles+", "logic puzzles+", "Rubik's cubes+", "escape rooms+",
          "word searches+", "nonograms+"},
         {"I can happily lose an evening to {p}.",
          "{P} {is} a great way for me to give my brain a workout.",
          "Whenever I need a break from screens, I turn to {p}."},
         {"I'm planning a cozy puzzle weekend and want a bit of every kind I like. What should I get ready?",
          "My friends are planning a puzzle-themed birthday for me. What kinds of puzzles should they include?"}},
        {"journaling styles", "journaling styles",
         {"bullet journaling", "gratitude journaling", "morning pages", "art journaling", "dream journaling",
          "travel journaling", "prompt journaling"},
         {"I make time for {p} most days.",
          "{P} {has} become an important part of my routine.",
          "I've filled a stack of notebooks with {p}."},
         {"I'm buying notebooks for the new year and want one for each way I like to journal. What should I "
          "plan for?",
          "A friend asked how I journal so she can get me a thoughtful gift. Which styles should I mention?"}},
        {"home improvement projects", "home projects",
         {"refinishing furniture", "tiling", "building shelves", "painting accent walls", "installing lighting",
          "landscaping", "wallpapering", "restoring old doors"},
         {"A free weekend spent {p} sounds great to me.",
          "I get a lot of satisfaction from {p}.",
          "{P} {is} the kind of project I can't resist."},
         {"I'm making a list for the hardware store so I'm ready for every kind of home project I enjoy. "
          "What should I plan for?",
          "I'm planning a long weekend of DIY at home. Which projects should I line up so it's all stuff I "
          "like doing?"}},
        {"garden types", "kinds of gardens",
         {"vegetable gardens+", "rock gardens+", "herb gardens+", "cottage gardens+", "Japanese gardens+",
          "butterfly gardens+", "rain gardens+", "container gardens+"},
         {"I could spend hours pottering around {p}.",
          "I'd fill my yard with {p} if I had the space.",
          "Visiting {p} always lifts my mood."},
         {"I just bought a house with a big yard and want to design sections I'd love. What kinds of gardens should "
          "I plan?",
          "I'm picking garden tours for a spring trip. What kinds of gardens should I look for so I see every kind I "
          "love?"}},
        {"houseplants", "houseplants",
         {"pothos", "monstera=monsteras+", "snake plant=snake plants+", "fiddle-leaf fig=fiddle-leaf figs+",
          "peace lily=peace lilies+", "ZZ plant=ZZ plants+", "string of pearls", "calathea=calatheas+"},
         {"My windowsills have plenty of {p} on them.",
          "I'm always tempted to bring home more {p}.",
          "Taking care of {p} is a small joy in my week."},
         {"I'm planning a plant shopping trip for my new apartment and want every kind I love. What should I "
          "buy?",
          "A friend is plant-sitting while I travel and asked which plants she'll be looking after. Which "
          "ones do I keep?"}},

        // ---- Social & leisure ----
        {"weekend activities", "weekend activities",
         {"farmers markets+", "long bike rides+", "museum hopping", "lazy brunches+", "movie marathons+",
          "thrift shopping", "board game nights+", "day trips+"},
         {"My ideal weekend would include {p}.",
          "{P} {is} something I look forward to all week.",
          "If I have a free Saturday, {p} {is} high on my list."},
         {"I've got a three-day weekend coming up and want to fill it with everything I enjoy. What should I "
          "plan?",
          "A friend is planning a surprise weekend for me and wants it full of things I enjoy. What should she "
          "include?"}},
        {"party activities", "party activities",
         {"karaoke", "charades", "trivia", "murder mystery games+", "dance-offs+", "Pictionary",
          "scavenger hunts+", "beer pong"},
         {"A party isn't complete for me without {p}.",
          "I'm usually the first to suggest {p} when people get together.",
          "{P} always bring{s} out my competitive side."},
         {"I'm planning my own birthday party and want it packed with things I love doing. What should be on "
          "the agenda?",
          "My roommates are throwing a party in my honor. What activities should they plan?"}},
        {"dating activities", "date ideas",
         {"cooking classes+", "picnics+", "mini golf", "wine tasting", "pottery classes+", "bowling",
          "sunset walks+", "stargazing"},
         {"My idea of a great date involves {p}.",
          "{P} {is} a date I'd never turn down.",
          "Some of my favorite dates have involved {p}."},
         {"My partner wants to plan a month of date nights I'll love. What should they plan?",
          "I'm filling out the ideal-dates section of a dating profile. What should I list?"}},
        {"types of social gatherings", "kinds of get-togethers",
         {"potlucks+", "dinner parties+", "game nights+", "backyard barbecues+", "book clubs+",
          "house parties+", "karaoke nights+"},
         {"I'm always happy to get an invitation to {p}.",
          "{P} {is} a great excuse to see friends, in my book.",
          "I love hosting {p} when I have the space."},
         {"I want to host something every month this year. What kinds of get-togethers should I put on the "
          "calendar?",
          "A new neighbor asked what kinds of gatherings I'd enjoy being invited to. What should I tell "
          "him?"}},
        {"board games", "board games",
         {"chess", "Catan", "Scrabble", "Ticket to Ride", "Codenames", "Pandemic", "Carcassonne", "Azul"},
         {"I'll always say yes to a game of {p}.",
          "{P} come{s} out at almost every game night I host.",
          "I've spent countless evenings playing {p} with friends."},
         {"I'm packing games for a cabin weekend and want to bring every one I enjoy. Which should I pack?",
          "I'm setting up a game shelf in my living room. Which games should definitely be on it?"}},
        {"card games", "card games",
         {"poker", "gin rummy", "cribbage", "solitaire", "euchre", "Uno", "bridge", "spades"},
         {"Pull out a deck for {p} and I'm in.",
          "I'll play {p} for hours if someone lets me.",
          "{P} {is} how I like to pass a long evening."},
         {"I'm bringing cards to a family reunion and want to teach everyone the games I like. Which games "
          "should I plan on?",
          "I'm hosting a card night. Which games should be on the table so I get to play all my favorites?"}},
        {"conversation topics", "conversation topics",
         {"philosophy", "urban planning", "travel stories+", "space exploration", "food history",
          "conspiracy theories+", "childhood memories+", "language quirks+"},
         {"Get me talking about {p} and I'll go on all night.",
          "I love conversations that wander into {p}.",
          "I'm always happy when a chat turns to {p}."},
         {"I'm going to a dinner where I won't know anyone. What topics could I bring up that I'd genuinely "
          "enjoy discussing?",
          "A friend is seating me at her wedding next to people who share my interests. Which topics should "
          "she match me on?"}},

        // ---- Tech & learning ----
        {"programming languages", "programming languages",
         {"Python", "Rust", "Haskell", "Kotlin", "TypeScript", "Elixir", "Ruby", "Lua"},
         {"I genuinely enjoy writing {p}.",
          "Side projects in {p} are my idea of fun.",
          "{P} {is} a language I reach for whenever I can."},
         {"I'm setting up a new laptop for coding and want tooling for every language I like to work in. "
          "What should I install?",
          "A recruiter asked which languages I'd enjoy using day to day. What should I tell them?"}},
        {"tech interests", "tech interests",
         {"robotics", "virtual reality", "home automation", "3D printing", "open-source software",
          "mechanical keyboards+", "retro computing", "drones+"},
         {"I spend a lot of evenings reading about {p}.",
          "{P} {is} the kind of tech I could tinker with endlessly.",
          "I get excited whenever there's news about {p}."},
         {"I'm picking talks at a big tech conference. Which tracks should I choose so all my interests are "
          "covered?",
          "My family wants to get me gadgets related to what I'm into. Which areas of tech should I point "
          "them toward?"}},
        {"academic subjects", "academic subjects",
         {"linguistics", "statistics", "art history", "marine biology", "economics", "organic chemistry",
          "archaeology", "astronomy"},
         {"I've always found {p} fascinating.",
          "In school, {p} {was} a class I looked forward to.",
          "I still read about {p} in my spare time."},
         {"I'm signing up for evening courses at the community college. Which subjects should I enroll in so "
          "I'm studying everything I enjoy?",
          "I want to fill a bookshelf with textbooks on subjects I love. What should it cover?"}},
        {"skills to learn", "skills to pick up",
         {"sign language", "sailing", "welding", "public speaking", "bread baking", "first aid",
          "touch typing", "juggling"},
         {"I'd love to finally learn {p} this year.",
          "Learning {p} has been on my wish list for a while.",
          "I keep bookmarking beginner classes in {p}.",
          "Someday soon I want to get properly good at {p}.",
          "I've been meaning to pick up {p} for ages."},
         {"I'm planning my learning goals for next year and want a class for every skill I'm eager to pick "
          "up. What should I look for?",
          "My company offers a learning budget. Which skills should I spend it on?"},
         false},
        {"languages to learn", "languages to learn",
         {"Japanese", "Portuguese", "Swahili", "Korean", "Arabic", "Icelandic", "Greek", "Tagalog"},
         {"I'd really like to become fluent in {p} someday.",
          "I practice a little {p} whenever I have spare time.",
          "Learning {p} is one of my big goals right now.",
          "I've started picking up some {p} with an app.",
          "I'd love to be able to hold a real conversation in {p}."},
         {"I'm choosing language apps and tutors for the year. Which languages should I sign up for?",
          "I want to plan trips that let me practice the languages I'm studying. Which languages should the "
          "trips cover?"},
         false},
        {"language learning methods", "language learning methods",
         {"flashcards+", "language exchanges+", "immersion trips+", "watching shows with subtitles",
          "graded readers+", "shadowing", "grammar drills+", "conversation classes+"},
         {"{P} {has} done wonders for my language learning.",
          "I stick with {p} because that approach really works for me.",
          "When I'm learning a new language, I lean heavily on {p}."},
         {"I'm designing a study plan for a new language and want it to include every method I enjoy. What "
          "should be in it?",
          "A tutor asked how I like to learn languages. What should I tell her?"}},
        {"study techniques", "study techniques",
         {"spaced repetition", "practice tests+", "mind mapping", "Feynman technique=the Feynman technique",
          "study groups+", "active recall", "interleaving", "summary sheets+"},
         {"When exams come around, I rely on {p}.",
          "{P} {has} made a real difference in how well I remember things.",
          "I swear by {p} when I need to learn something quickly."},
         {"I'm building a study schedule for a certification exam and want to use every technique I like. "
          "What should go into it?",
          "A younger cousin asked how I study. Which techniques should I tell him about?"}},
        {"note-taking methods", "note-taking methods",
         {"Cornell notes+", "sketchnoting", "outlining", "Zettelkasten", "mind maps+", "digital notebooks+",
          "index cards+", "voice memos+"},
         {"I find {p} really helpful for taking notes.",
          "In meetings, I often rely on {p}.",
          "{P} {has} kept my notes organized for years."},
         {"I'm setting up a note-taking system for a new job and want it to combine every method I like. "
          "What should it include?",
          "A classmate asked how I take notes. What should I describe?"}},
        {"productivity methods", "productivity methods",
         {"Pomodoro technique=the Pomodoro technique;Pomodoro", "time blocking", "Getting Things Done;GTD",
          "Eisenhower matrix=the Eisenhower matrix", "Kanban boards+", "daily to-do lists+",
          "weekly reviews+"},
         {"My workdays go much better when I use {p}.",
          "I swear by {p} for staying on track.",
          "{P} {has} kept me sane during busy weeks."},
         {"I'm setting up a fresh planner for the new quarter. Which methods should I build into it?",
          "My manager asked what systems help me stay productive. What should I tell her?"}},

        // ---- Wellness & self-care ----
        {"mental health activities", "ways to look after my mental health",
         {"long walks+", "breathing exercises+", "art therapy", "digital detoxes+", "gratitude lists+",
          "therapy sessions+", "cold showers+", "support groups+"},
         {"When my head gets cluttered, {p} really help{s}.",
          "{P} {has} made a real difference to my mental health.",
          "I make a point of fitting in {p} when life gets stressful.",
          "On hard weeks, {p} {is} one of the first things I turn to.",
          "I've learned that {p} keep{s} me balanced when things get hectic."},
         {"I'm writing a self-care plan for a stressful stretch at work. What should it include so I have "
          "everything that helps me?",
          "My counselor asked me to list what keeps me steady. What should be on the list?"},
         false},
        {"meditation types", "kinds of meditation",
         {"mindfulness meditation", "loving-kindness meditation", "body scans+", "walking meditation",
          "transcendental meditation", "breath counting", "guided meditation", "mantra meditation"},
         {"{P} leave{s} me feeling centered.",
          "I try to squeeze in some {p} most mornings.",
          "{P} {has} helped me through some rough weeks."},
         {"I'm putting together a week-long meditation plan. Which practices should it include so I get to "
          "do every kind I like?",
          "A meditation app asked me to choose the sessions I'd enjoy. What should I select?"}},
        {"self-care activities", "self-care activities",
         {"bubble baths+", "face masks+", "massages+", "manicures+", "solo movie dates+", "slow mornings+",
          "long naps+", "sauna sessions+"},
         {"{P} always help{s} me recharge.",
          "I treat myself to {p} whenever I can.",
          "A week feels better when it includes {p}."},
         {"I have a whole free day to myself next week. What should I plan so it includes all my favorite "
          "ways to unwind?",
          "My sister wants to gift me a self-care day. What should it include?"}},
        {"sleep habits", "sleep aids",
         {"white noise", "blackout curtains+", "earplugs+", "weighted blanket=a weighted blanket",
          "eye mask=an eye mask", "silk pillowcase=a silk pillowcase", "sleep playlist=a sleep playlist"},
         {"I sleep so much better with {p}.",
          "{P} {has} made a huge difference to how well I sleep.",
          "Ever since I started using {p}, my nights have been calmer.",
          "I can't imagine going to bed without {p} these days.",
          "Honestly, {p} {is} a big part of why I wake up rested."},
         {"I'm staying in a hotel for a week and want to sleep as well as I do at home. What should I bring "
          "or set up?",
          "I'm moving into the guest room during a renovation. What does it need so I sleep the way I "
          "like?"},
         false},
        {"morning routine habits", "morning habits",
         {"stretching", "journaling", "meditating", "reading the news", "going for a run", "making my bed",
          "watering my plants", "making pour-over coffee"},
         {"My mornings feel off if I skip {p}.",
          "I like to start the day by {p}.",
          "A good morning for me always includes {p}.",
          "I feel more awake after {p}.",
          "Most days I fit in {p} before I even check my phone."},
         {"I'm trying to plan a morning routine for a work trip that still feels like mine. What should it "
          "include?",
          "A friend is staying with me and asked what my mornings look like so she doesn't get in the way. "
          "What should I tell her?"},
         false},
        {"evening routine habits", "evening habits",
         {"reading fiction", "tidying the kitchen", "drinking herbal tea", "planning the next day",
          "calling my parents", "taking an evening walk", "doing a crossword"},
         {"My evenings don't feel complete without {p}.",
          "I like to wind down by {p}.",
          "Before bed, I make time for {p}.",
          "After dinner, I usually make a point of {p}.",
          "My day feels properly finished after {p}."},
         {"I'm moving in with a roommate and want to explain my evening routine so we don't clash. What "
          "should I mention?",
          "I'm planning a relaxing evening at a hotel that still feels like home. What should I make time "
          "for?"},
         false},

        // ---- Career & finance ----
        {"career fields", "career fields",
         {"data science", "education", "renewable energy", "architecture", "journalism", "game design",
          "public health", "marine conservation"},
         {"I could see myself building a career in {p}.",
          "Working in {p} has always appealed to me.",
          "I keep an eye on job openings in {p}.",
          "If I changed jobs tomorrow, I'd look for something in {p}.",
          "I love reading about what people in {p} actually do all day."},
         {"I'm going to a big career fair and want to visit booths in every field that interests me. What "
          "should I look for?",
          "A career coach asked which fields to focus on when sending me job leads. What should I tell her?"},
         false},
        {"types of volunteering", "kinds of volunteering",
         {"tutoring kids", "food bank shifts+", "beach cleanups+", "trail maintenance", "mentoring",
          "reading to seniors", "tree planting", "animal shelter work"},
         {"I always feel good after {p}.",
          "I try to sign up for {p} whenever I have a free Saturday.",
          "{P} {is} a way of giving back that really suits me."},
         {"I want to set aside time each month this year to give back. What should I schedule?",
          "A volunteer coordinator asked what kinds of opportunities I'd like to hear about. What should I "
          "tell her?"}},
        {"investment types", "kinds of investments",
         {"index funds+", "real estate", "dividend stocks+", "government bonds+", "gold",
          "peer-to-peer lending", "high-yield savings accounts+"},
         {"I'm comfortable putting money into {p}.",
          "{P} {is} something I like having in my portfolio.",
          "I've had good experiences with {p} over the years."},
         {"I'm meeting a financial planner and want her to include every kind of investment I like. What "
          "should I tell her?",
          "I'm setting up a new brokerage account. What should I plan to hold?"}},
        {"budget planning methods", "budgeting methods",
         {"50/30/20 rule=the 50/30/20 rule", "zero-based budgeting", "envelope budgeting", "budgeting apps+",
          "sinking funds+", "no-spend months+", "cash-only weeks+"},
         {"{P} {has} kept my finances on track.",
          "Managing money got easier once I started using {p}.",
          "I'd recommend {p} to anyone trying to save."},
         {"I'm setting up my budget for next year and want it to use every method I like. What should I "
          "include?",
          "My brother asked how I manage my money. Which methods should I explain?"}},

        // ---- Media consumption ----
        {"social media content types", "kinds of social media content",
         {"cooking videos+", "travel vlogs+", "DIY tutorials+", "cat videos+", "science explainers+",
          "comedy skits+", "book reviews+", "fitness challenges+"},
         {"I could scroll through {p} for ages.",
          "My feed has plenty of {p}, and I like it that way.",
          "I'm always sending {p} to my friends."},
         {"I'm starting a fresh account and want to follow creators who post everything I enjoy. What should "
          "I search for?",
          "I'm curating a feed for my lunch breaks. What kinds of posts should it show?"}},
        {"news formats", "news formats",
         {"email newsletters+", "daily briefing podcasts+", "print newspapers+", "evening broadcasts+",
          "live blogs+", "explainer videos+", "weekly magazines+", "long-form investigations+"},
         {"I get a lot of my news from {p}.",
          "{P} {is} how I like to keep up with the world.",
          "I make time for {p} even on busy days."},
         {"I'm setting up a morning news routine and want it to use every format I like. What should it "
          "include?",
          "A friend asked how I keep up with current events. What should I recommend?"}},
        {"podcast formats", "podcast formats",
         {"interview shows+", "audio dramas+", "panel discussions+", "call-in shows+", "storytelling shows+",
          "Q&A episodes+", "quiz shows+"},
         {"I always have a few {p} in my queue.",
          "{P} {is} what I put on during long drives.",
          "I'll give almost any podcast a chance if it does {p} well."},
         {"I'm planning a long solo drive and want my queue to include every podcast format I enjoy. What "
          "should I download?",
          "A friend starting a podcast asked which formats I'd actually listen to. What should I tell him?"}},
        {"types of reading material", "kinds of reading material",
         {"magazines+", "comics+", "cookbooks+", "travel guides+", "biographies+", "essay collections+",
          "poetry chapbooks+"},
         {"I pick up {p} whenever I pass a bookstore.",
          "There's usually a stack of {p} on my coffee table.",
          "I happily spend a slow Sunday with {p}."},
         {"I'm packing a reading bag for a beach week. What should go in it so I have everything I like to "
          "read?",
          "I'm setting up a reading nook and want its shelves to hold everything I enjoy reading. What should "
          "I put there?"}},
        {"audio listening formats", "audio formats",
         {"audiobooks+", "vinyl records+", "radio dramas+", "ASMR", "lo-fi playlists+", "live radio",
          "ambient soundscapes+"},
         {"I usually have {p} playing in the background.",
          "{P} keep{s} me company on long walks.",
          "I've spent a lot of quiet evenings with {p}."},
         {"I'm setting up a speaker system at home and want it ready for everything I like to listen to. "
          "What should it support?",
          "I've got a long-haul flight coming up. What should I load up on so I have all my favorite kinds "
          "of listening?"}},
        {"content creation types", "kinds of content creation",
         {"video editing", "podcasting", "blogging", "livestreaming", "newsletter writing", "vlogging",
          "animating"},
         {"I lose track of time whenever I'm {p}.",
          "{P} {is} a creative outlet I really enjoy.",
          "I've been spending more of my evenings {p}."},
         {"I'm building a home studio and want it set up for every kind of content I like making. What "
          "should I plan for?",
          "A creative agency asked what kinds of content I enjoy producing. What should I tell them?"}},

        // ---- Misc ----
        {"animals", "animals",
         {"otters+", "owls+", "red pandas+", "elephants+", "octopuses+", "capybaras+", "foxes+",
          "penguins+"},
         {"I could watch {p} for hours.",
          "{P} never fail{s} to make me smile.",
          "Whenever a nature show features {p}, I stop what I'm doing."},
         {"I'm planning a day at a big zoo and want to see every animal I love. Which exhibits should I "
          "find?",
          "A friend is painting a mural for my wall featuring all my favorite animals. Which ones should she "
          "include?"}},
        {"dog breeds", "dog breeds",
         {"corgi=corgis+", "border collie=border collies+", "beagle=beagles+", "Shiba Inu=Shiba Inus+",
          "dachshund=dachshunds+", "golden retriever=golden retrievers+", "greyhound=greyhounds+",
          "Bernese mountain dog=Bernese mountain dogs+"},
         {"My heart melts every time I see {p} at the park.",
          "I'd love to have {p} in my life someday.",
          "I always stop to say hello to {p} on the street."},
         {"I'm going to a big dog show and want to watch every breed I love. Which rings should I visit?",
          "A friend is making me a calendar with a different dog on each page, all breeds I adore. Which "
          "breeds should she use?"}},
        {"collectibles", "collectibles",
         {"vintage postcards+", "enamel pins+", "snow globes+", "vintage cameras+", "trading cards+",
          "first-edition books+", "antique maps+", "vinyl records+"},
         {"I can never resist adding to my collection of {p}.",
          "Whenever I pass a flea market, I look for {p}.",
          "I've built up a collection of {p} that I'm proud of."},
         {"I'm building shelves to display everything I collect. What do I need space for?",
          "My family wants to add to my collections for my birthday. What kinds of items should they look "
          "for?"}},
        {"subscription box types", "subscription boxes",
         {"snack boxes+", "book boxes+", "meal kits+", "craft kits+", "beauty boxes+", "plant subscriptions+",
          "puzzle boxes+", "coffee subscriptions+"},
         {"I always look forward to my {p} arriving.",
          "I'd happily keep paying for {p} every month.",
          "Opening {p} is a highlight of my month."},
         {"I'm reviewing my monthly subscriptions and want to keep every box I actually enjoy. Which ones "
          "should stay?",
          "A friend wants to give me a subscription for my birthday. What kinds would I be glad to get?"}},
        {"car types", "kinds of cars",
         {"hatchbacks+", "convertibles+", "pickup trucks+", "station wagons+", "vintage roadsters+",
          "minivans+", "compact SUVs+", "electric sedans+"},
         {"I'd happily spend a road trip driving {p}.",
          "I catch myself admiring {p} whenever I pass a dealership.",
          "{P} {has} always appealed to me more than people expect."},
         {"I'm planning a series of car rentals for a long trip and want to drive every kind of car I like. "
          "What should I reserve?",
          "A friend is taking me to a car show. Which sections should we visit so I see every type I love?"}},
        {"home organization methods", "ways to organize my home",
         {"clear storage bins+", "drawer dividers+", "pegboards+", "label makers+",
          "over-the-door organizers+", "KonMari method=the KonMari method", "capsule wardrobes+",
          "lazy Susans+"},
         {"{P} {has} made my place so much easier to keep tidy.",
          "I rely on {p} to keep clutter under control.",
          "I'd recommend {p} to anyone drowning in clutter."},
         {"I'm moving into a smaller apartment and want to set it up with every organizing approach I like. "
          "What should I plan to use?",
          "A professional organizer is coming over and asked what systems I already like. What should I tell "
          "her?"}},
        {"types of naps", "kinds of naps",
         {"power naps+", "cat naps+;catnaps", "Sunday afternoon naps+", "hammock naps+", "post-lunch naps+",
          "couch naps+", "beach naps+"},
         {"Few things beat {p}, in my opinion.",
          "{P} {is} something I'll happily make time for.",
          "I'm a firm believer in {p}."},
         {"I'm planning a truly lazy vacation and want room for every kind of nap I enjoy. What should I "
          "plan for?",
          "My partner teases me about how much I love napping. What kinds of naps do I actually enjoy?"}},
        {"camping styles", "camping styles",
         {"backcountry camping", "car camping", "glamping", "hammock camping", "canoe camping",
          "winter camping", "beach camping", "RV camping"},
         {"I'm always up for a weekend of {p}.",
          "{P} {is} my kind of getaway.",
          "Some of my best memories come from {p}."},
         {"I'm buying camping gear this spring and want to be ready for every style of camping I enjoy. What "
          "should I plan for?",
          "My outdoors club is setting its calendar for the year. Which kinds of trips should I suggest so "
          "they're all ones I'd love?"}},
        {"astrology interests", "astrology interests",
         {"birth charts+", "moon phases+", "horoscopes+", "compatibility readings+", "rising signs+",
          "planetary transits+", "tarot readings+"},
         {"I could spend hours reading about {p}.",
          "{P} {is} the kind of astrology topic I never tire of.",
          "I always end up talking about {p} with friends."},
         {"I'm signing up for an astrology workshop series. Which sessions should I attend to cover "
          "everything I'm curious about?",
          "A friend who reads charts asked which parts of astrology I like hearing about. What should I tell "
          "her?"}},
    };
    return k_raw;
}

}  // namespace

const std::vector<Category>& categories() {
    static const std::vector<Category> k_categories = [] {
        std::vector<Category> out;
        for (const auto& raw : raw_categories()) {
            Category c;
            c.name = raw.name;
            c.label = raw.label;
            for (const char* spec : raw.preferences) c.preferences.push_back(parse_preference(spec));
            for (const char* s : raw.statements) c.statement_templates.emplace_back(s);
            for (const char* q : raw.questions) c.questions.emplace_back(q);
            c.general_templates = raw.general;
            out.push_back(std::move(c));
        }
        return out;
    }();
    return k_categories;
}

const std::vector<std::string>& general_statement_templates() {
    static const std::vector<std::string> k_templates = {
        "I've always had a soft spot for {p}.",
        "I'm a big fan of {p}.",
        "Honestly, {p} never get{s} old for me.",
        "There's something about {p} that just works for me.",
        "{P} {has} been a favorite of mine for years.",
        "I never get tired of {p}.",
        "For the record, I really like {p}.",
        "My friends know I'm a sucker for {p}.",
        "I get genuinely excited about {p}.",
        "I'd pick {p} over most other {label}.",
        "{P} {is} easily among my favorite {label}.",
        "I have a real weakness for {p}.",
        "Something about {p} always puts me in a good mood.",
        "I'll admit it: I love {p}.",
        "If you asked me what I enjoy, {p} would come up pretty quickly.",
    };
    return k_templates;
}

const std::vector<std::string>& fallback_question_templates() {
    static const std::vector<std::string> k_templates = {
        "I'm writing a short note about my tastes for a friend who is planning a surprise. Which {label} "
        "should it mention so nothing I enjoy is left out?",
        "Before I make plans around them, can you remind me of all the {label} I've told you I like?",
        "I want to plan something that includes every one of my favorite {label}. What should it cover?",
    };
    return k_templates;
}

std::string render_statement(const std::string& tmpl, const Preference& p, const Category& c) {
    std::string out = tmpl;
    out = text::replace_all(out, "{P}", text::capitalize(p.phrase));
    out = text::replace_all(out, "{p}", p.phrase);
    out = text::replace_all(out, "{c}", p.canonical);
    out = text::replace_all(out, "{is}", p.plural ? "are" : "is");
    out = text::replace_all(out, "{has}", p.plural ? "have" : "has");
    out = text::replace_all(out, "{was}", p.plural ? "were" : "was");
    out = text::replace_all(out, "{s}", p.plural ? "" : "s");
    out = text::replace_all(out, "{label}", c.label);
    return out;
}

std::string render_question(const std::string& tmpl, const Category& c) {
    return text::replace_all(tmpl, "{label}", c.label);
}

}  // namespace memfail::suites::memfail_suite::coexisting
