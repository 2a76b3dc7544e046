#!/usr/bin/env python3
"""The report page at fleet scale (docs/SURVEY.md, "The report page"): two
fleets made here from the committed surveys (never committed), each
imported into a database of its own and drawn by 'survey report --html':

  (a) 1000 surveys of 250 devices: the committed devices under varied
      names, compute units, drivers and hosts, four surveys each;
  (b) 1000 hosts of one device model, a survey each.

For each: the page is at most 5 MB and made within 10 s (the issue's
bound; the test allows 2x the time on a loaded machine and reports the
time it took), and headless Chromium loads it within 3 s (the fastest
of five loads; all five reported), with a search box that filters the device
table and sections to a device typed into it, and a section per device
whose id the device table links to. Exits 77 (skipped) when no browser is
installed, after the size and time checks.

Environment (from tests/meson.build): BALLCL.
"""
import copy
import glob
import json
import os
import random
import shutil
import time

import testlib
from fleetlib import host_fleet, vary
from testlib import check

ROOT = testlib.SOURCE_ROOT
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "docs", "surveys", "*.json")))
tmp = testlib.tempdir()
rng = random.Random(3636)
MAX_BYTES = 5 * 1000 * 1000
MAX_REPORT_S, MAX_LOAD_S = 10.0, 3.0
# Under the sanitizers (tools/sanitize.sh) the program runs several times
# slower by design: the times are printed, and held to their bounds only in
# the plain build, where they are the figures the page promises.
SANITIZED = bool(os.environ.get("BALLCL_ASAN_RUNTIME"))
SLACK = 2.0  # a shared test machine: fail only well past the bound


def one_device_survey(doc, dev):
    out = copy.deepcopy(doc)
    out["devices"] = [dev]
    return out


BASES = []  # (document, device) of every committed device
for path in COMMITTED:
    doc = json.load(open(path))
    for dev in doc["devices"]:
        BASES.append((doc, dev))


def fleet_of_250(folder):
    """1000 surveys of 250 devices; returns the devices' (name, host)."""
    devices = []
    for j in range(250):
        doc, dev = BASES[j % len(BASES)]
        variant = j // len(BASES)
        name = f"{dev['identity']['name']} v{variant % 12}"
        cu = dev["limits"]["compute_units"] * (1 + variant % 3)
        host = f"rack{j % 17:02d}-node{j:03d}"
        devices.append((name, host))
        for k in range(4):
            d = copy.deepcopy(dev)
            d["identity"]["name"] = name
            d["identity"]["host"] = host
            d["identity"]["driver"] = f"{dev['identity']['driver']}-r{k % 3}"
            d["limits"]["compute_units"] = cu
            d["measured"] = vary(d["measured"], rng)
            s = one_device_survey(doc, d)
            s["date"] = f"2026-{1 + k * 3:02d}-{1 + j % 28:02d}T{j % 24:02d}:00:00Z"
            with open(os.path.join(folder, f"d{j:03d}-{k}.json"), "w") as f:
                json.dump(s, f)
    return devices


def fleet_of_hosts(folder):
    """1000 hosts of one device model; returns the devices' (name, host)."""
    return host_fleet(json.load(open(os.path.join(ROOT, "docs", "surveys", "pocl-amd-epyc.json"))),
                      folder, rng)


pages = []  # (what, page, devices)
for what, make in (("1000 surveys of 250 devices", fleet_of_250),
                   ("1000 hosts of one model", fleet_of_hosts)):
    tag = "250" if make is fleet_of_250 else "hosts"
    folder = os.path.join(tmp, tag)
    os.mkdir(folder)
    devices = make(folder)
    db = os.path.join(tmp, f"{tag}.db")
    r = testlib.run(["survey", "import", "--db", db, "--json", folder], timeout=300)
    j = json.loads(r.out) if r.rc == 0 else {}
    check(r.rc == 0 and j.get("added") == 1000, f"{what}: 1000 surveys imported",
          r.describe()[:300])
    page = os.path.join(tmp, f"{tag}.html")
    t0 = time.monotonic()
    r = testlib.run(["survey", "report", "--db", db, "--html", page], timeout=300)
    took = time.monotonic() - t0
    size = os.path.getsize(page) if os.path.exists(page) else 0
    print(f"note: {what}: page {size / 1e6:.2f} MB, report {took:.2f} s")
    check(r.rc == 0 and size > 0, f"{what}: report --html exit 0", r.describe()[:300])
    check(size <= MAX_BYTES, f"{what}: page at most 5 MB ({size / 1e6:.2f} MB)")
    check(took <= MAX_REPORT_S * SLACK or SANITIZED,
          f"{what}: report within {MAX_REPORT_S:.0f} s (x{SLACK:.0f} slack; {took:.2f} s"
          + (", not held under the sanitizers)" if SANITIZED else ")"))
    html = open(page, encoding="utf-8").read() if size else ""
    check(html.count('class="device" id="dev-') == len(set(devices)),
          f"{what}: a section per device ({len(set(devices))})")
    check('id="search"' in html, f"{what}: a search box")
    pages.append((what, page, devices))

chromium = shutil.which("chromium") or shutil.which("chromium-browser")
driver_exe = shutil.which("chromedriver")
if not chromium or not driver_exe:
    if testlib._failures:
        testlib.finish()
    testlib.skip("no browser: chromium and chromium-driver are not installed")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    testlib.skip("no browser driver: python3-selenium is not installed")

opts = webdriver.ChromeOptions()
opts.binary_location = chromium
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
          "--disable-background-networking", "--proxy-server=http://127.0.0.1:9",
          f"--user-data-dir={os.path.join(tmp, 'profile')}"):
    opts.add_argument(a)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
try:
    browser = webdriver.Chrome(service=Service(driver_exe), options=opts)
except Exception as ex:
    check(False, "headless Chromium starts", str(ex)[:800])
    testlib.finish()

try:
    browser.set_page_load_timeout(60)
    browser.get("about:blank")  # the browser's own start-up is not the page's
    for what, page, devices in pages:
        # Five loads: on a shared machine one load can take several times
        # another; the fastest says what the page costs, all are reported.
        took = []
        for _ in range(5):
            t0 = time.monotonic()
            browser.get("file://" + page)  # returns at the load event
            took.append(time.monotonic() - t0)
        print(f"note: {what}: loaded in Chromium in " + ", ".join(f"{t:.2f}" for t in took)
              + " s")
        check(browser.title == "ballcl device survey" and (min(took) <= MAX_LOAD_S or SANITIZED),
              f"{what}: Chromium loads the page within {MAX_LOAD_S:.0f} s (fastest of 5: "
              f"{min(took):.2f} s)")
        # Every device findable: the table links to a section of each.
        links = browser.execute_script(
            "return Array.from(document.querySelectorAll('#device-table td.device-name a'))"
            ".map(a => [a.getAttribute('href'), a.textContent,"
            " !!document.getElementById(a.getAttribute('href').slice(1))]);")
        check(len(links) == len(set(devices)) and all(ok for _, _, ok in links),
              f"{what}: every device's row links to its section ({len(links)})",
              str([x for x in links if not x[2]][:3]))
        # The search box: a device's host (unique) leaves one row, one section.
        name, host = devices[len(devices) // 2]
        box = browser.find_element(By.ID, "search")
        box.send_keys(host)
        shown = browser.execute_script(
            "const v=e=>getComputedStyle(e).display!=='none';"
            "return [Array.from(document.querySelectorAll('#device-table tbody tr')).filter(v)"
            ".map(r=>r.querySelector('td.device-name').textContent),"
            "Array.from(document.querySelectorAll('section.device')).filter(v).length];")
        check(shown[0] == [name] and shown[1] == 1,
              f"{what}: typing '{host}' leaves its device, '{name}'", str(shown)[:300])
        box.clear()
        box.send_keys(name.split()[0])
        n = browser.execute_script(
            "return Array.from(document.querySelectorAll('#device-table tbody tr'))"
            ".filter(e=>getComputedStyle(e).display!=='none').length;")
        want = sum(1 for d in set(devices) if name.split()[0].lower() in d[0].lower())
        check(n == want, f"{what}: typing '{name.split()[0]}' leaves its {want} devices", str(n))
        errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        check(not errors, f"{what}: no console error", str(errors[:3]))
finally:
    browser.quit()

testlib.finish()
