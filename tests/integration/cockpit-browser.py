#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Cockpit page in a real browser (run by cockpit-browser.sh).

Usage: cockpit-browser.py ADMIN_URL USER_URL DISK OTHER DROPIN_DIR SHOTS_DIR BUS_MONITOR

ADMIN_URL is the page served by a cockpit-ws whose session is root's, USER_URL the page served
by one whose session is an unprivileged user's. ioschedd runs on the test's bus with
--verify-interval: DISK has a rule that sets scheduler and read_ahead_kb, OTHER has one that
sets nr_requests. Debian's chromium, headless, driven by chromedriver (WebDriver). Every step
waits for what it needs to see, never for a fixed time; each prints one line, and the first
that fails ends the run with exit status 1 and a screenshot of the page as it was.
BUS_MONITOR is busctl monitor's record (JSON, a message a line) of ioschedd's signals and of
the Properties.Get calls on disk objects, from before the first page is loaded.
"""
import json
import os
import sys
import tempfile

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# Long enough for a loaded 2-CPU machine; a step that is right takes a fraction of it.
WAIT = 60

admin_url, user_url, disk, other, dropin_dir, shots, bus_monitor = sys.argv[1:8]


class Failed(Exception):
    pass


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    # As the machine's notes say Chromium must run here: as root without its sandbox, and
    # without the background connections a closed network refuses.
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--window-size=1500,900"):
        opts.add_argument(a)
    # A new, empty profile each time ($TMPDIR is the test's directory, removed at its end).
    opts.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-"))
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def wait_for(driver, what, cond, timeout=WAIT):
    # The page renders a disk's row again when its properties change: an element found a moment
    # ago may be gone when its text is read. That is a look too early, not a failure: look again
    # (WebDriverWait ignores NoSuchElementException by default, this one too).
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: cond(d))
    except TimeoutException:
        raise Failed("%s: not within %d s" % (what, timeout)) from None


def sysfs(name, attr):
    with open("/sys/block/%s/queue/%s" % (name, attr)) as f:
        return f.read().strip()


def bracketed(text):
    return text[text.index("[") + 1:text.index("]")] if "[" in text else text


def row(driver, name):
    return driver.find_element(By.CSS_SELECTOR, 'tr.disk[data-disk="%s"]' % name)


def row_text(driver, name):
    try:
        return row(driver, name).text
    except Exception:
        return ""


def key_item(driver, name, key):
    return row(driver, name).find_element(By.CSS_SELECTOR, 'li[data-key="%s"]' % key).text


def errors_text(driver):
    return driver.find_element(By.ID, "errors").text


def open_details(driver, name):
    if not row(driver, name).find_elements(By.CSS_SELECTOR, 'button.open[aria-expanded="true"]'):
        row(driver, name).find_element(By.CSS_SELECTOR, "button.open").click()
    return wait_for(driver, "the details of " + name,
                    lambda d: d.find_element(By.CSS_SELECTOR,
                                             'tr.details[data-path$="/%s"]' % name))


def set_key(driver, name, key, value):
    details = open_details(driver, name)
    for cls, text in (("set-key", key), ("set-value", value)):
        field = details.find_element(By.CLASS_NAME, cls)
        field.clear()
        field.send_keys(text)
    details.find_element(By.CSS_SELECTOR, "button.set").click()


def load(driver, url):
    driver.get(url)
    wait_for(driver, "the page's first reading of the disks",
             lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-loaded") == "true")
    # Set now, checked later: still there means the page was never reloaded.
    driver.execute_script("window.ioschedTestMarker = 1;")


def csp_violations(driver):
    return [e["message"] for e in driver.get_log("browser")
            if "Content Security Policy" in e["message"] or "Refused to" in e["message"]]


def step(msg):
    print("cockpit-browser: " + msg, flush=True)


def run_admin(driver):
    load(driver, admin_url)
    # 1. The table lists the disks, with the daemon's values and the rule's file:line.
    wait_for(driver, "both disks in the table",
             lambda d: d.find_elements(By.CSS_SELECTOR, 'tr.disk[data-disk="%s"]' % disk)
             and d.find_elements(By.CSS_SELECTOR, 'tr.disk[data-disk="%s"]' % other))
    wait_for(driver, "%s's scheduler as the kernel has it" % disk,
             lambda d: row(d, disk).find_element(By.CLASS_NAME, "scheduler").text
             == bracketed(sysfs(disk, "scheduler")))
    # Its kind from Device (transport, rotational).
    kind = "loop, " + ("rotational" if sysfs(disk, "rotational") == "1" else "solid-state")
    wait_for(driver, "%s's kind %r" % (disk, kind),
             lambda d: row(d, disk).find_element(By.CLASS_NAME, "kind").text == kind)
    text = row_text(driver, disk)
    if "iosched.conf:" not in text:
        raise Failed("%s's row names no rule file:line: %r" % (disk, text))
    if "ioschedd" not in driver.find_element(By.ID, "daemon").text:
        raise Failed("no daemon version: %r" % driver.find_element(By.ID, "daemon").text)
    step("the table lists %s and %s with their values and rules" % (disk, other))
    # The machine's other loop devices are on the page too, no rule matching them.
    driver.find_element(By.ID, "only-matched").click()
    wait_for(driver, "only the disks a rule matches",
             lambda d: all(r.is_displayed() == (r.get_attribute("data-disk") in (disk, other))
                           for r in d.find_elements(By.CSS_SELECTOR, "tr.disk")))

    # 2. Plan: what applying would write, from the daemon.
    row(driver, disk).find_element(By.CSS_SELECTOR, "button.plan").click()
    wait_for(driver, "the plan of " + disk,
             lambda d: not d.find_element(By.ID, "plan-output").get_attribute("hidden")
             and "read_ahead_kb" in d.find_element(By.ID, "plan-output").text)
    step("Plan shows the keys of %s" % disk)

    # 3. A SetPolicy through the page reaches sysfs, and the table follows.
    set_key(driver, disk, "read_ahead_kb", "512")
    wait_for(driver, "read_ahead_kb 512 in sysfs", lambda d: sysfs(disk, "read_ahead_kb") == "512")
    wait_for(driver, "read_ahead_kb 512 on the page",
             lambda d: "512" in key_item(d, disk, "read_ahead_kb") and "→" not in key_item(d, disk, "read_ahead_kb"))
    if not any(f.endswith(".conf") for f in os.listdir(dropin_dir)):
        raise Failed("SetPolicy wrote no drop-in in %s" % dropin_dir)
    step("Set read_ahead_kb=512 through the page: sysfs has 512, the drop-in is written")

    # 4. A bad value: the bus error is shown as text, nothing changes.
    set_key(driver, disk, "read_ahead_kb", "lots")
    wait_for(driver, "the InvalidSetting error on the page",
             lambda d: "org.iosched1.Error.InvalidSetting" in errors_text(d))
    if sysfs(disk, "read_ahead_kb") != "512":
        raise Failed("a refused value changed read_ahead_kb to %s" % sysfs(disk, "read_ahead_kb"))
    step("a bad value shows the bus's error as text: %s" % errors_text(driver).splitlines()[0])

    # 5. Another writer, behind the page's back: a scheduler the policy does not set, and a
    # key it does (ioschedd puts that back at its next reading). No reload.
    wanted = bracketed(sysfs(other, "scheduler"))
    offered = sysfs(other, "scheduler").replace("[", "").replace("]", "").split()
    new = next(s for s in offered if s != wanted)
    with open("/sys/block/%s/queue/scheduler" % other, "w") as f:
        f.write(new)
    wait_for(driver, "%s's scheduler %s on the page" % (other, new),
             lambda d: row(d, other).find_element(By.CLASS_NAME, "scheduler").text == new)
    with open("/sys/block/%s/queue/read_ahead_kb" % disk, "w") as f:
        f.write("128")
    wait_for(driver, "the drift of read_ahead_kb put back, in the last change",
             lambda d: "read_ahead_kb: 128 → 512" in row_text(d, disk))
    if sysfs(disk, "read_ahead_kb") != "512":
        raise Failed("read_ahead_kb is %s after the drift was put back" % sysfs(disk, "read_ahead_kb"))
    if driver.execute_script("return window.ioschedTestMarker") != 1:
        raise Failed("the page was reloaded")
    step("another writer's changes appear without a reload (%s: %s; %s: read_ahead_kb 128 → 512)"
         % (other, new, disk))
    driver.save_screenshot(os.path.join(shots, "cockpit-iosched.png"))

    # 6. Reset of the key: the drop-in's key goes, the rule's value comes back.
    details = open_details(driver, disk)
    details.find_element(By.CSS_SELECTOR, 'tr[data-key="read_ahead_kb"] button.reset').click()
    wait_for(driver, "read_ahead_kb back at the rule's 256", lambda d: sysfs(disk, "read_ahead_kb") == "256")
    step("Reset of read_ahead_kb brings back the rule's value")
    violations = csp_violations(driver)
    if violations:
        raise Failed("content security policy violations: %s" % violations)


def run_user(driver):
    load(driver, user_url)
    wait_for(driver, "the disks, read by the unprivileged user",
             lambda d: d.find_elements(By.CSS_SELECTOR, 'tr.disk[data-disk="%s"]' % disk))
    before = {a: sysfs(disk, a) for a in ("scheduler", "read_ahead_kb")}
    dropins = sorted(os.listdir(dropin_dir))

    set_key(driver, disk, "read_ahead_kb", "1024")
    row(driver, disk).find_element(By.CSS_SELECTOR, "button.apply").click()
    driver.find_element(By.ID, "apply-all").click()
    denied = ("org.freedesktop.DBus.Error.AccessDenied",
              "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
    wait_for(driver, "three denials on the page",
             lambda d: sum(errors_text(d).count(n) for n in denied) >= 3)
    after = {a: sysfs(disk, a) for a in before}
    if after != before or sorted(os.listdir(dropin_dir)) != dropins:
        raise Failed("the unprivileged session changed something: %s -> %s" % (before, after))
    driver.save_screenshot(os.path.join(shots, "cockpit-iosched-denied.png"))
    step("the unprivileged session reads every disk and changes nothing (SetPolicy, Apply, "
         "ApplyAll denied, shown as text)")


def bus_messages():
    with open(bus_monitor) as f:
        lines = f.read().splitlines()
    # The monitor is still running: its last line may be half written.
    for i, line in enumerate(lines):
        try:
            yield json.loads(line)
        except ValueError:
            if i != len(lines) - 1:
                raise


def explicit_reads():
    """A page's explicit properties of a disk are read once when the disk appears (the page's
    Get) and once per invalidation (cockpit-bridge's cache reads what PropertiesChanged
    invalidates), no more: at any point of the bus's messages, a page's cockpit-bridge's Get
    calls of a property of a disk are at most one more than the disk's invalidations of it and
    appearances since the bridge's first Get of it."""
    allowed = {}  # (sender, path, property) -> Get calls allowed
    gets = {}
    seen = {}  # (sender, path, property) -> what the monitor saw, for the failure's message
    for m in bus_messages():
        data = m.get("payload", {}).get("data", [])
        if m["type"] == "method_call" and m.get("member") == "Get":
            key = (m["sender"], m["path"], data[1])
            allowed.setdefault(key, 1)
            gets[key] = gets.get(key, 0) + 1
            seen.setdefault(key, []).append("Get")
            if gets[key] > allowed[key]:
                raise Failed("%s read %s of %s %d times, after %d invalidations and appearances"
                             " (%s)" % (key[0], key[2], key[1], gets[key], allowed[key] - 1,
                                        ", ".join(seen[key])))
        elif m["type"] == "signal" and m.get("member") in ("PropertiesChanged", "InterfacesAdded"):
            path, names = ((m["path"], data[2]) if m["member"] == "PropertiesChanged"
                           else (data[0], None))
            for key in allowed:
                if key[1] == path and (names is None or key[2] in names):
                    allowed[key] += 1
                    seen[key].append(m["member"])
    # Both sessions read both disks: the monitor saw the page's calls.
    for name in (disk, other):
        readers = {k[0] for k in gets if k[1].rsplit("/", 1)[-1] == name}
        if len(readers) < 2:
            raise Failed("the bus monitor saw %d pages read %s's explicit properties, not 2"
                         % (len(readers), name))
    most = max(gets.values())
    step("each page read a disk's explicit property once and once per invalidation at most "
         "(%d Get calls of %d properties of disks, at most %d of one)"
         % (sum(gets.values()), len(gets), most))


def main():
    for url, fn, name in ((admin_url, run_admin, "admin"), (user_url, run_user, "user")):
        driver = browser()
        try:
            fn(driver)
        except Failed as e:
            driver.save_screenshot(os.path.join(shots, "failed-%s.png" % name))
            for entry in driver.get_log("browser"):
                print("cockpit-browser: console: %s" % entry["message"], file=sys.stderr)
            print("cockpit-browser: FAIL: %s (screenshot %s/failed-%s.png)" % (e, shots, name),
                  file=sys.stderr)
            return 1
        finally:
            driver.quit()
    try:
        explicit_reads()
    except Failed as e:
        print("cockpit-browser: FAIL: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
