// SPDX-License-Identifier: MIT
// Opens the HTML report of a write-integrity run (writ, several --modes) in headless Chromium and
// checks its "Write integrity" section and the probe browser's memory checks: the page loads from the
// file alone with no console error, the section draws its checks chart (bars with error bars) and
// the failure distribution, the Check filter keeps only probes on which that check failed, and an
// opened probe shows its expected value and its memory checks at every k with their verdicts.
// Prints one line per check; exits 1 on a failure.
//
// Usage: node check_integrity.mjs REPORT.html SCREENSHOT.png
// Environment: CHROMIUM (default /usr/bin/chromium).
import { launchQuiet, openReport } from "./open_report.mjs";

const [reportPath, screenshotPath] = process.argv.slice(2);
if (!reportPath || !screenshotPath) {
  console.error("usage: node check_integrity.mjs REPORT.html SCREENSHOT.png");
  process.exit(2);
}

const failures = [];
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
}

const browser = await launchQuiet();
let exitCode = 0;
try {
  const { page, consoleErrors, outsideRequests } = await openReport(browser, reportPath);

  const integrity = await page.evaluate(() => {
    const s = document.querySelector("section#integrity");
    if (!s) return null;
    return {
      heading: s.querySelector("h2") ? s.querySelector("h2").textContent : "",
      bars: s.querySelectorAll("svg g.bar").length,
      errorBars: s.querySelectorAll("svg g.error-bar").length,
      segments: s.querySelectorAll("svg g.segment").length,
      tables: s.querySelectorAll("table").length,
      nav: !!document.querySelector('nav a[href="#integrity"]'),
    };
  });
  console.log(`integrity section: ${JSON.stringify(integrity)}`);
  check(integrity && /Write integrity/.test(integrity.heading) && integrity.nav, "the Write integrity section is present and listed");
  check(integrity && integrity.bars > 0 && integrity.errorBars === integrity.bars, "it draws the checks as bars with error bars");
  check(integrity && integrity.segments > 0, "it draws the failure distribution");
  check(integrity && integrity.tables >= 3, "it has the check, failure and dataset tables");
  if (integrity) await page.locator("section#integrity").screenshot({ path: screenshotPath });

  // The Check filter: only probes on which stale_exposure failed (verbatim keeps every old value).
  const checkFilter = page.locator("select#f-check");
  check((await checkFilter.isVisible()), "the probe browser has a Check filter");
  const options = await checkFilter.locator("option").evaluateAll((os) => os.map((o) => o.value));
  const pick = options.includes("stale_exposure") ? "stale_exposure" : options.find((v) => v && v !== "*");
  if (pick) {
    await checkFilter.selectOption(pick);
    const rows = await page.locator("[data-probe]").count();
    check(rows > 0, `filtering by ${pick} failed lists probes (${rows} on the first page)`);
    const first = page.locator("[data-probe]").first();
    await first.click();
    const box = page.locator("details.probe[open] [data-integrity]");
    await box.waitFor({ state: "visible", timeout: 5000 }).catch(() => {});
    const shown = (await box.count())
      ? await box.evaluate((b) => ({
          text: b.innerText,
          rows: [...b.querySelectorAll("tr[data-check]")].map((tr) => ({
            check: tr.getAttribute("data-check"),
            verdict: tr.children[2].textContent,
          })),
        }))
      : { text: "", rows: [] };
    check(/Expected: /.test(shown.text), "an opened probe shows the value it expects");
    check(
      shown.rows.some((r) => r.check === pick && r.verdict === "failed"),
      `it lists its memory checks with verdicts, ${pick} failed among them (${shown.rows.length} rows)`,
    );
    const ks = new Set((await box.evaluate((b) => [...b.querySelectorAll("tr[data-check] td.num")].map((td) => td.textContent))));
    check(ks.size >= 2, `its checks are shown at every k (${[...ks].join(", ")})`);
    await checkFilter.selectOption("");
  }

  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? ": " + consoleErrors.join(" | ") : ""}`);
  check(outsideRequests.length === 0, `no request left the file${outsideRequests.length ? ": " + outsideRequests.join(" ") : ""}`);
} catch (err) {
  console.error(`FAIL ${err && err.stack ? err.stack : err}`);
  exitCode = 1;
} finally {
  await browser.close();
}
if (failures.length) exitCode = 1;
process.exit(exitCode);
