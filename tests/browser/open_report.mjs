// SPDX-License-Identifier: MIT
// What the browser checks share: a headless Chromium that reaches no network of its own, and a page
// opened on a report file alone, every other request refused and counted, console errors collected.
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";

// Flags that keep a headless Chromium from reaching the network on its own (updates, sync,
// metrics, safe browsing, field trials) and from needing a GPU or a user namespace sandbox.
export const quietFlags = [
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

// Chromium (CHROMIUM, default /usr/bin/chromium), headless, with the quiet flags.
export function launchQuiet() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: quietFlags,
  });
}

// A 1280x900 page on `reportPath`, loaded. The report must be self-contained: anything but the
// file itself and inline data is refused and listed in `outsideRequests`; console errors and page
// errors are listed in `consoleErrors` as they come.
export async function openReport(browser, reportPath) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const consoleErrors = [];
  const outsideRequests = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") consoleErrors.push(msg.text());
  });
  page.on("pageerror", (err) => consoleErrors.push(String(err)));
  const reportUrl = pathToFileURL(reportPath).href;
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url === reportUrl || url.startsWith("data:")) return route.continue();
    outsideRequests.push(url);
    return route.abort();
  });
  await page.goto(reportUrl, { waitUntil: "load" });
  return { page, consoleErrors, outsideRequests };
}
