#!/usr/bin/env python3
"""The survey report page (docs/SURVEY.md, "The report page") in a real
browser: the committed surveys are imported into a fresh database, the page
is made, and headless Chromium (Debian's chromium and chromium-driver,
through python3-selenium) opens it. Checked: no console message of level
error, no request for anything outside the file (Chromium runs with its
proxy set to an unreachable address, and every request it logs must be a
file: or data: URL), every device's name, every chart a rendered SVG with
content, the coverage table with the fleet's counts, the side-by-side
selector over every survey, the search box, a section per device linked from
the table, and the sorting at work. A screenshot of the whole page is saved
as survey-report.png in the folder given as the first argument (the build
folder). Exits 77 (skipped) when no browser is installed.

Environment (from tests/meson.build): BALLCL.
"""
import glob
import json
import os
import shutil
import sys

import testlib
from testlib import check

ROOT = testlib.SOURCE_ROOT
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "docs", "surveys", "*.json")))
OUT_DIR = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()

chromium = shutil.which("chromium") or shutil.which("chromium-browser")
driver_exe = shutil.which("chromedriver")
if not chromium or not driver_exe:
    testlib.skip("no browser: chromium and chromium-driver are not installed "
                 "(tools/setup.sh installs them)")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
except ImportError:
    testlib.skip("no browser driver: python3-selenium is not installed (tools/setup.sh "
                 "installs it)")

tmp = testlib.tempdir()
db = os.path.join(tmp, "surveys.db")
page = os.path.join(tmp, "report.html")

r = testlib.run(["survey", "import", "--db", db] + COMMITTED)
check(r.rc == 0 and r.err == "", "import of the committed surveys: exit 0", r.describe())
r = testlib.run(["survey", "report", "--db", db, "--html", page])
check(r.rc == 0 and r.err == "" and os.path.getsize(page) > 0, "report --html: exit 0",
      r.describe())

# What the page must show, from the files themselves: each device at its
# latest survey (a device is its platform, vendor, name, type and compute
# units, as docs/SURVEY.md says).
latest = {}
for path in COMMITTED:
    doc = json.load(open(path))
    for d in doc["devices"]:
        i = d["identity"]
        key = (i["platform"], i["vendor"], i["name"], i["type"], d["limits"]["compute_units"])
        if key not in latest or latest[key][0] <= doc["date"]:
            latest[key] = (doc["date"], d)
names = sorted({k[2] for k in latest})
surveyed_twice = len(latest) < sum(len(json.load(open(p))["devices"]) for p in COMMITTED)

html = open(page, encoding="utf-8").read()
import re  # noqa: E402
remote = re.findall(r"""(?:src|href|url)\s*[=(]\s*["']?\s*(?:https?:|//)""", html)
check(not remote, "the page names no remote resource", str(remote[:3]))

opts = webdriver.ChromeOptions()
opts.binary_location = chromium
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
          "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--disable-default-apps",
          # Anything that would leave the file goes to a proxy that is not
          # there, and fails (which the logs below would show).
          "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
          f"--user-data-dir={os.path.join(tmp, 'profile')}"):
    opts.add_argument(a)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
try:
    browser = webdriver.Chrome(service=Service(driver_exe), options=opts)
except Exception as ex:  # a browser that does not start is a failure, not a skip
    check(False, "headless Chromium starts", str(ex)[:800])
    testlib.finish()

try:
    browser.set_page_load_timeout(60)
    browser.get_log("performance")  # the browser's own start-up, not the page's
    browser.get("file://" + page)
    check(browser.title == "ballcl device survey", "the page loads", browser.title)

    # Every device's name, in the device table.
    cells = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#device-table td.device-name")]
    for n in names:
        check(n in cells, f"device table: '{n}' present", str(cells))
    check(len(cells) == len(latest), f"device table: {len(latest)} rows, one per device",
          str(cells))

    # Charts: every figure holds an SVG that the browser laid out, with
    # drawn content (paths or rectangles), one per main figure group; the
    # device surveyed twice has its history, small charts drawn inline.
    figures = browser.find_elements(By.CSS_SELECTOR, "figure.chart")
    check(len(figures) >= 7, f"at least 7 charts ({len(figures)})")
    for i, f in enumerate(figures):
        caption = f.find_element(By.TAG_NAME, "figcaption").text
        svgs = f.find_elements(By.TAG_NAME, "svg")
        if not svgs:
            # A chart of figures no committed survey has (schema 3's) says so.
            check("older schema" in f.text, f"chart '{caption}': an SVG or a note why not")
            continue
        box = browser.execute_script(
            "const s=arguments[0];const b=s.getBoundingClientRect();"
            "return [b.width,b.height,s.querySelectorAll('path,rect,polygon').length,"
            "s.querySelectorAll('text').length, s.getBBox().width];", svgs[0])
        check(box[0] > 100 and box[1] > 100 and box[2] > 10 and box[3] > 3 and box[4] > 50,
              f"chart '{caption}': rendered SVG with content", str(box))
    hist = browser.find_elements(By.CSS_SELECTOR, "section.device figure.history svg")
    check(len(hist) >= (3 if surveyed_twice else 0),
          "a device surveyed twice has its charts over time", str(len(hist)))
    if hist:
        box = browser.execute_script(
            "const s=arguments[0];s.scrollIntoView();const b=s.getBoundingClientRect();"
            "return [b.width,b.height,s.querySelectorAll('polyline').length,"
            "s.querySelectorAll('rect.band').length];", hist[0])
        check(box[0] > 100 and box[1] > 40 and box[2] == 1 and box[3] == 1,
              "a history chart: a line and its band, laid out", str(box))

    # Coverage: the table is there, and its counts are the fleet's.
    cov = browser.find_elements(By.ID, "coverage-table")
    check(len(cov) == 1, "coverage table present")
    if cov:
        rows = {}
        for tr in cov[0].find_elements(By.CSS_SELECTOR, "tbody tr"):
            tds = tr.find_elements(By.TAG_NAME, "td")
            rows[tds[0].text] = tds[1].text
        for ext in ("cl_khr_fp64", "cl_khr_fp16", "cl_khr_global_int32_base_atomics"):
            have = sum(ext in d["limits"]["extensions"] for _, d in latest.values())
            if have:
                check(rows.get(ext) == f"{have} / {len(latest)}",
                      f"coverage of {ext}: {have} / {len(latest)}", str(rows.get(ext)))
        fp64 = sum(bool(d["limits"]["fp64"]) for _, d in latest.values())
        check(rows.get("limits.fp64") == f"{fp64} / {len(latest)}",
              f"coverage of the fp64 capability: {fp64} / {len(latest)}",
              str(rows.get("limits.fp64")))

    # Side by side: any two surveys (every device's every survey can be
    # picked); the table follows the picks.
    runs = sum(len(json.load(open(p))["devices"]) for p in COMMITTED)
    sel_a = Select(browser.find_element(By.ID, "pick-a"))
    sel_b = Select(browser.find_element(By.ID, "pick-b"))
    check(len(sel_a.options) == runs, f"side by side: every survey of every device can be "
          f"picked ({runs})", str(len(sel_a.options)))
    picked = {o.text.split(". ", 1)[1].split(" — ")[0] for o in sel_a.options}
    check(picked == set(names), "side by side: the picks name every device", str(picked))
    if len(sel_b.options) > 1:
        sel_a.select_by_index(len(sel_a.options) - 1)
        sel_b.select_by_index(0)
        first = browser.find_element(By.CSS_SELECTOR, "#compare-table tbody tr")
        tds = [t.text for t in first.find_elements(By.TAG_NAME, "td")]
        want_a = sel_a.first_selected_option.text.split(". ", 1)[1].split(" — ")[0]
        want_b = sel_b.first_selected_option.text.split(". ", 1)[1].split(" — ")[0]
        check(tds[2] == want_a and tds[3] == want_b, "side by side: the two picked surveys",
              str(tds))
        differ = browser.find_elements(By.CSS_SELECTOR, "#compare-table tr.differs")
        check(len(differ) > 3, "side by side: differing rows marked")
        if surveyed_twice:
            # One device's two surveys: the same name, the figures side by side.
            by_dev = {}
            for i, o in enumerate(sel_a.options):
                by_dev.setdefault(o.text.split(". ", 1)[0], []).append(i)
            two = [v for v in by_dev.values() if len(v) > 1]
            if check(two, "side by side: a device with two surveys can be picked twice"):
                sel_a.select_by_index(two[0][0])
                sel_b.select_by_index(two[0][1])
                tds = [t.text for t in browser.find_element(
                    By.CSS_SELECTOR, "#compare-table tbody tr").find_elements(By.TAG_NAME, "td")]
                check(tds[2] == tds[3], "side by side: one device against itself, two surveys",
                      str(tds))

    # Search and anchors: every name in the table links to its section;
    # typing a name leaves the rows and sections holding it.
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#device-table td.device-name a'))"
        ".map(a => !!document.getElementById(a.getAttribute('href').slice(1)));")
    check(len(links) == len(latest) and all(links), "every device's row links to its section",
          str(links))
    box = browser.find_element(By.ID, "search")
    box.send_keys(names[0])
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('#device-table tbody tr'))"
        ".filter(e=>getComputedStyle(e).display!=='none')"
        ".map(r=>r.querySelector('td.device-name').textContent);")
    check(shown and all(names[0] in n for n in shown)
          and len(shown) == sum(names[0] in k[2] for k in latest),
          f"search: '{names[0]}' leaves its rows", str(shown))
    box.clear()
    browser.execute_script("document.getElementById('search').dispatchEvent(new Event('input'));")

    # Sorting: a click on "copy GB/s" orders the rows by it.
    head = [h for h in browser.find_elements(By.CSS_SELECTOR, "#device-table thead th")
            if h.text.startswith("copy")]
    if check(len(head) == 1, "device table: a copy column"):
        col = browser.find_elements(By.CSS_SELECTOR, "#device-table thead th").index(head[0])
        for direction in ("ascending", "descending"):
            head[0].click()
            vals = browser.execute_script(
                "return Array.from(document.querySelectorAll('#device-table tbody tr'))"
                ".map(r => Number(r.cells[arguments[0]].getAttribute('data-v')));", col)
            want = sorted(vals, reverse=direction == "descending")
            check(vals == want, f"sorting by copy bandwidth, {direction}", str(vals))

    # No console error (CSP violations and script errors are reported there).
    logs = browser.get_log("browser")
    errors = [e for e in logs if e.get("level") == "SEVERE"]
    check(not errors, "no console error", str(errors[:3]))

    # No request left the file.
    # Every request the page's document made (the page itself included),
    # and every one that failed: none may be anything but the file or data:.
    sent, failed = {}, []
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        p = msg.get("params", {})
        if msg.get("method") == "Network.requestWillBeSent":
            if p.get("documentURL", "").startswith("file:"):
                sent[p["requestId"]] = p["request"]["url"]
        elif msg.get("method") == "Network.loadingFailed":
            failed.append((p.get("requestId"), p.get("errorText", "")))
    resources = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name);")
    outside = [u for u in list(sent.values()) + resources
               if not u.startswith(("file:", "data:"))]
    check(sent and not outside, "every request of the page is the file itself (or data:)",
          str(outside[:5]) + f" of {len(sent)}")
    page_failed = [f for f in failed if f[0] in sent]
    check(not page_failed, "no request of the page failed", str(page_failed[:5]))

    # The screenshot: the whole page.
    height = browser.execute_script("return document.documentElement.scrollHeight;")
    browser.set_window_size(1400, min(int(height) + 100, 16000))
    shot = os.path.join(OUT_DIR, "survey-report.png")
    browser.save_screenshot(shot)
    check(os.path.getsize(shot) > 10000, f"screenshot saved: {shot}")
finally:
    browser.quit()

testlib.finish()
