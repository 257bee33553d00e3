// SPDX-License-Identifier: MIT
// Opens a memfail HTML report in headless Chromium and checks what a reader would see: the page
// loads from the file alone (every other request is refused and counted as a failure), logs no
// error, shows every section with drawn charts, its probe browser filters and opens a probe, and
// its screenshot is not blank. Prints one line per check; exits 1 on the first failure.
//
// Usage: node check_report.mjs REPORT.html SCREENSHOT.png
// Environment: CHROMIUM (default /usr/bin/chromium).
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";

const [reportPath, screenshotPath] = process.argv.slice(2);
if (!reportPath || !screenshotPath) {
  console.error("usage: node check_report.mjs REPORT.html SCREENSHOT.png");
  process.exit(2);
}

const failures = [];
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
}

// Flags that keep a headless Chromium from reaching the network on its own (updates, sync,
// metrics, safe browsing, field trials) and from needing a GPU or a user namespace sandbox.
const quietFlags = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-default-apps",
  "--disable-domain-reliability",
  "--disable-sync",
  "--disable-extensions",
  "--disable-client-side-phishing-detection",
  "--disable-field-trial-config",
  "--metrics-recording-only",
  "--no-first-run",
  "--no-pings",
  "--mute-audio",
];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: quietFlags,
});
let exitCode = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const consoleErrors = [];
  const outsideRequests = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") consoleErrors.push(msg.text());
  });
  page.on("pageerror", (err) => consoleErrors.push(String(err)));
  // The report must be self-contained: anything but the file itself and inline data is refused.
  const reportUrl = pathToFileURL(reportPath).href;
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url === reportUrl || url.startsWith("data:")) return route.continue();
    outsideRequests.push(url);
    return route.abort();
  });

  await page.goto(reportUrl, { waitUntil: "load" });

  const sections = await page.evaluate(() =>
    [...document.querySelectorAll("section[id]")].map((s) => ({
      id: s.id,
      svgs: s.querySelectorAll("svg").length,
      marks: s.querySelectorAll("svg rect, svg circle, svg path, svg line").length,
      text: s.innerText.trim().length,
    })),
  );
  const byId = Object.fromEntries(sections.map((s) => [s.id, s]));
  console.log(`sections: ${sections.map((s) => `${s.id}(${s.svgs} svg, ${s.marks} marks)`).join(" ")}`);
  for (const id of ["success", "stages", "models", "tokens", "runs", "probes"]) {
    check(byId[id] && byId[id].text > 0, `section #${id} is present and not empty`);
  }
  for (const id of ["success", "stages"]) {
    check(byId[id] && byId[id].svgs > 0 && byId[id].marks > 10, `section #${id} draws a chart`);
  }

  // The probe browser: a list of probes, filters that narrow it, a probe that opens.
  const probeCount = () => page.locator("[data-probe]").count();
  const before = await probeCount();
  check(before > 0, `the probe browser lists probes (${before} on the first page)`);
  const stageFilter = page.locator("select#f-stage");
  check((await stageFilter.count()) === 1, "the probe browser has a stage filter");
  if ((await stageFilter.count()) === 1) {
    const options = await stageFilter.locator("option").evaluateAll((os) => os.map((o) => o.value));
    const notRetrieved = options.find((v) => v === "not_retrieved");
    if (notRetrieved) {
      await stageFilter.selectOption(notRetrieved);
      const stages = await page
        .locator("[data-probe]")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-stage")));
      check(
        stages.length > 0 && stages.every((s) => s === "not_retrieved"),
        `filtering by stage not_retrieved shows only such probes (${stages.length})`,
      );
      await stageFilter.selectOption("");
    }
  }
  const first = page.locator("[data-probe]").first();
  if ((await first.count()) === 1) {
    await first.click();
    const detail = page.locator("[data-probe-detail]");
    await detail.first().waitFor({ state: "visible", timeout: 5000 }).catch(() => {});
    const text = (await detail.count()) ? await detail.first().innerText() : "";
    check(text.length > 20, `opening a probe shows its details (${text.length} characters)`);
  }

  await page.screenshot({ path: screenshotPath, fullPage: true });
  // Not blank: draw the screenshot on a canvas and count pixels far from the page background.
  const png = (await import("node:fs")).readFileSync(screenshotPath).toString("base64");
  const blank = await browser.newPage();
  const ink = await blank.evaluate(async (data) => {
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const canvas = document.createElement("canvas");
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const pixels = ctx.getImageData(0, 0, img.width, img.height).data;
    const [r0, g0, b0] = [pixels[0], pixels[1], pixels[2]];
    let inked = 0;
    const colours = new Set();
    for (let i = 0; i < pixels.length; i += 4) {
      const d = Math.abs(pixels[i] - r0) + Math.abs(pixels[i + 1] - g0) + Math.abs(pixels[i + 2] - b0);
      if (d > 60) inked++;
      if (i % 64 === 0) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
    }
    return { width: img.width, height: img.height, fraction: inked / (pixels.length / 4), colours: colours.size };
  }, png);
  console.log(
    `screenshot: ${ink.width}x${ink.height}, ${(100 * ink.fraction).toFixed(1)}% inked, ${ink.colours} colours sampled`,
  );
  check(ink.fraction > 0.02 && ink.colours > 8, "the screenshot is not blank");

  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? ": " + consoleErrors.join(" | ") : ""}`);
  check(
    outsideRequests.length === 0,
    `no request left the file${outsideRequests.length ? ": " + outsideRequests.join(" ") : ""}`,
  );
  writeFileSync(`${screenshotPath}.json`, JSON.stringify({ sections, ink, consoleErrors, outsideRequests }, null, 2));
} catch (err) {
  console.error(`FAIL ${err && err.stack ? err.stack : err}`);
  exitCode = 1;
} finally {
  await browser.close();
}
if (failures.length) exitCode = 1;
process.exit(exitCode);
