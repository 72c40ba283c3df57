#!/usr/bin/env python3
"""Drives the phone page in Debian's Chromium with Selenium, against a running jukeboxd whose
state it checks with the jukebox command. Run by the Swift test WebPageTests, which starts and
stops the daemon; exits non-zero with the reason when a flow fails.

Usage: web-test.py --base URL --password PW --jukebox PATH --socket PATH --state PATH --wav PATH [--screenshots DIR]
       web-test.py --flow restart --password PW --jukebox PATH --socket PATH

The restart flow plays clips c0 and c1 by tapping them, across a restart of the daemon that
the caller makes: it reads the base URL on its standard input, prints "played c0", waits for
"stopped", prints "banner shown", waits for "started", and ends with "all flows passed".
"""
import argparse, json, os, subprocess, sys, time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

def main():
    # The test process may hand down a private umask for a moment (it creates sockets in
    # process): Chromium cannot run in folders it made without search permission.
    os.umask(0o022)
    parser = argparse.ArgumentParser()
    parser.add_argument("--flow", choices=["controls", "restart"], default="controls")
    for name in ["--password", "--jukebox", "--socket"]:
        parser.add_argument(name, required=True)
    for name in ["--base", "--wav", "--state", "--screenshots"]:
        parser.add_argument(name)
    args = parser.parse_args()

    def jukebox(*words):
        result = subprocess.run([args.jukebox, "--socket", args.socket, "--json", *words], capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            sys.exit(f"jukebox {' '.join(words)} failed: {result.stderr}")
        return json.loads(result.stdout)

    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    wait = WebDriverWait(browser, 5)

    def holds(condition):
        # The page draws a list again on each event, so an element found a moment ago may be
        # gone by the time its text is read: that is "not yet", not a failure.
        try:
            return condition()
        except (StaleElementReferenceException, NoSuchElementException):
            return False

    def within_a_second(condition, what):
        # A change made elsewhere must show within 1 s.
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            if holds(condition):
                return
            time.sleep(0.05)
        sys.exit(f"not shown within 1 s: {what}")

    def eventually(condition, what, seconds=5):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if holds(condition):
                return
            time.sleep(0.05)
        sys.exit(f"never happened: {what}")

    def button(name):
        return browser.find_element(By.CSS_SELECTOR, f'button[aria-label="{name}"], button#{name.lower()}')

    def tap(name):
        # A list drawn again after an event replaces its buttons: find it again then.
        for _ in range(20):
            try:
                return button(name).click()
            except (StaleElementReferenceException, NoSuchElementException):
                time.sleep(0.05)
        sys.exit(f"could not tap {name}")

    def shown(element_id):
        try:
            return browser.find_element(By.ID, element_id).is_displayed()
        except StaleElementReferenceException:
            return False

    def history_has(text):
        # Read in one step: the list may be drawn again between finding an item and reading it.
        return text in browser.execute_script("return document.getElementById('history').innerText")

    def said(expected):
        # The caller's next step, on standard input.
        line = sys.stdin.readline().strip()
        if line != expected:
            sys.exit(f"expected {expected!r} from the test, got {line!r}")

    # WCAG AA: every visible text against what is behind it, 4.5:1 (3:1 when large).
    CONTRAST = """
        const parse = (text) => { const m = text.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
          const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return { rgb: p.slice(0, 3), alpha: p.length > 3 ? p[3] : 1 }; };
        const luminance = (rgb) => { const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
          return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        const behind = (element) => { for (let e = element; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
          if (c && c.alpha > 0.5) return c.rgb; } return parse(getComputedStyle(document.documentElement).backgroundColor)?.rgb || [255, 255, 255]; };
        const failures = [];
        let checked = 0;
        for (const element of document.querySelectorAll("body *")) {
          const text = [...element.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim()
            || (element.matches("input:not([type=range]):not([type=file])") ? element.value : "");
          const box = element.getBoundingClientRect();
          if (!text || box.width === 0 || box.height === 0 || getComputedStyle(element).visibility === "hidden") continue;
          const style = getComputedStyle(element);
          const fore = luminance(parse(style.color).rgb), back = luminance(behind(element));
          const ratio = (Math.max(fore, back) + 0.05) / (Math.min(fore, back) + 0.05);
          const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
          const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
          checked += 1;
          if (ratio < needed) failures.push(`${element.tagName.toLowerCase()}#${element.id} "${text.slice(0, 30)}": ${ratio.toFixed(2)}:1`);
        }
        return [checked, failures];
    """

    def contrast_meets_aa(where):
        for scheme in ["light", "dark"]:
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            checked, failures = browser.execute_script(CONTRAST)
            if checked < 3 or failures:
                sys.exit(f"{where}, {scheme}: contrast below WCAG AA for {failures} ({checked} texts checked)")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    def focused():
        # The focused control's name and outline ("" when the focus is on the page itself).
        return browser.execute_script("""const e = document.activeElement;
            if (!e || e === document.body) return ['', 'none'];
            return [e.getAttribute('aria-label') || e.id || e.textContent.trim(), getComputedStyle(e).outlineStyle];""")

    def restart_flow():
        base = sys.stdin.readline().strip()
        browser.get(base + "/")
        wait.until(ready.visibility_of_element_located((By.ID, "login")))
        browser.find_element(By.ID, "password").send_keys(args.password)
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        wait.until(ready.visibility_of_element_located((By.ID, "app")))
        # A tap plays the clip (the test hears it in the sound card's capture).
        tap("Play c0")
        eventually(lambda: history_has("c0: completed"), "c0 played, in the page's history", seconds=10)
        print("played c0", flush=True)
        # The daemon stops: the page says so.
        said("stopped")
        eventually(lambda: shown("banner"), "the banner while the daemon is down", seconds=10)
        print("banner shown", flush=True)
        # It starts again: the page comes back by itself, still logged in, and live.
        said("started")
        eventually(lambda: not shown("banner") and shown("app"), "the page back after the restart", seconds=20)
        if shown("login"):
            sys.exit("the restart logged the browser out")
        jukebox("pause")
        within_a_second(lambda: shown("resume"), "paused by the CLI after the restart")
        browser.find_element(By.ID, "resume").click()
        eventually(lambda: jukebox("status")["paused"] is False, "resumed from the page after the restart")
        tap("Play c1")
        eventually(lambda: history_has("c1: completed"), "c1 played after the restart", seconds=10)

    try:
        if args.flow == "restart":
            restart_flow()
            print("all flows passed")
            return
        browser.get(args.base + "/")
        wait.until(ready.visibility_of_element_located((By.ID, "login")))
        contrast_meets_aa("the login page")
        # A wrong password is refused, with the server's words.
        browser.find_element(By.ID, "password").send_keys("not it")
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        wait.until(lambda _: "wrong password" in browser.find_element(By.ID, "login-error").text)
        # The right one opens the page.
        field = browser.find_element(By.ID, "password")
        field.clear()
        field.send_keys(args.password)
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        # The first right password is hashed (600 000 rounds of PBKDF2): allow a slow CPU.
        WebDriverWait(browser, 60).until(ready.visibility_of_element_located((By.ID, "app")))
        print("logged in")

        # What will happen: the next random pick, an hour away; paused, nothing is planned.
        eventually(lambda: "Next random pick" in browser.find_element(By.ID, "next").text, "the next pick under Coming up")
        # What the command line queues shows on the page within a second.
        jukebox("pause")
        within_a_second(lambda: browser.find_element(By.ID, "next").text == "Nothing planned.", "nothing planned while paused")
        within_a_second(lambda: browser.find_element(By.ID, "resume").is_displayed(), "paused by the CLI")
        jukebox("play", "water", "walk")
        within_a_second(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#queue li")) == 2, "two clips queued by the CLI")
        print("CLI changes shown")

        # Resume and pause from the page.
        browser.find_element(By.ID, "resume").click()
        eventually(lambda: jukebox("status")["paused"] is False, "resumed from the page")
        eventually(lambda: browser.find_element(By.ID, "pause").is_displayed(), "the Pause button is back")
        browser.find_element(By.ID, "pause").click()
        eventually(lambda: jukebox("status")["paused"] is True, "paused from the page")

        # Play a clip by tapping it.
        waiting = len(jukebox("queue")["waiting"])
        tap("Play walk")
        eventually(lambda: len(jukebox("queue")["waiting"]) == waiting + 1, "a clip queued by tapping it")
        waiting += 1
        # The queue list grows above the clips: tap the next button once it has moved.
        eventually(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#queue li")) == waiting, "the tapped clip in the queue")

        # With the session's cue.
        tap("Play water with the cue")
        eventually(lambda: any(e.get("cue") for e in json.load(open(args.state))["waiting"]), "a clip queued with the cue")

        # Remove an entry.
        eventually(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#queue li")) == waiting + 1, "the clip with the cue in the queue")
        tap("Remove walk")
        eventually(lambda: len(jukebox("queue")["waiting"]) == waiting, "an entry removed from the page")

        # The volume follows the slider.
        browser.execute_script("const v = document.getElementById('volume'); v.value = 37; v.dispatchEvent(new Event('input'));")
        eventually(lambda: jukebox("volume")["volume"] == 37, "the volume set by the slider")
        # An announcement, typed and sent.
        browser.find_element(By.ID, "say-text").send_keys("Dinner is ready")
        browser.find_element(By.CSS_SELECTOR, "#say button[type=submit]").click()
        eventually(lambda: any(e.get("say") == "Dinner is ready" for e in jukebox("queue")["waiting"]), "an announcement queued from the page")
        eventually(lambda: any("say: Dinner is ready" in e.text for e in browser.find_elements(By.CSS_SELECTOR, "#queue li")), "the announcement in the queue list")
        print("controls work")

        # Quiet by hand from the page; a request made to wait for its end shows as held, and
        # is queued once quiet is ended from the page.
        browser.find_element(By.ID, "quiet").click()
        eventually(lambda: jukebox("quiet")["quiet"] is True, "quiet turned on from the page")
        within_a_second(lambda: browser.find_element(By.ID, "quiet-state").text == "Quiet, set by hand until turned off", "the quiet state")
        waiting = len(jukebox("queue")["waiting"])
        jukebox("play", "--after-quiet", "walk")
        within_a_second(lambda: any("after quiet" in e.text for e in browser.find_elements(By.CSS_SELECTOR, "#queue li")), "the held request in the queue list")
        within_a_second(lambda: "(1 waiting for it to end)" in browser.find_element(By.ID, "quiet-state").text, "the held count")
        browser.find_element(By.ID, "quiet").click()
        eventually(lambda: jukebox("quiet")["quiet"] is False, "quiet ended from the page")
        eventually(lambda: len(jukebox("queue")["waiting"]) == waiting + 1, "the held request queued when quiet ended")
        within_a_second(lambda: browser.find_element(By.ID, "quiet").text == "Quiet", "the Quiet button back")
        print("quiet works")

        # Upload a WAV; it shows in the list and can be played.
        browser.find_element(By.ID, "upload").send_keys(args.wav)
        eventually(lambda: "Added" in browser.find_element(By.ID, "upload-message").text, "the upload accepted", seconds=10)
        name = os.path.splitext(os.path.basename(args.wav))[0]
        eventually(lambda: any(c["id"] == name for c in jukebox("clips")["clips"]), "the uploaded clip in the session")
        eventually(lambda: len(browser.find_elements(By.CSS_SELECTOR, f'button[aria-label="Play {name}"]')) == 1, "the uploaded clip on the page")
        # A refusal shows the server's own words, and adds nothing.
        notes = os.path.join(os.path.dirname(args.wav), "notes.wav")
        with open(notes, "w") as out:
            out.write("not audio at all")
        clips_before = len(jukebox("clips")["clips"])
        browser.find_element(By.ID, "upload").send_keys(notes)
        eventually(lambda: "cannot be played" in browser.find_element(By.ID, "upload-message").text, "the server's refusal shown", seconds=10)
        if len(jukebox("clips")["clips"]) != clips_before:
            sys.exit("a refused upload was added")
        print("upload works")

        # Edit a clip's window in its dialog; the session file gets it.
        tap("Edit water")
        wait.until(ready.visibility_of_element_located((By.ID, "clip-windows")))
        field = browser.find_element(By.ID, "clip-windows")
        field.clear()
        field.send_keys("09:00-18:00@mon,fri")
        browser.find_element(By.CSS_SELECTOR, "#clip-form button[type=submit]").click()
        def water():
            return next(c for c in jukebox("session")["document"]["clips"] if c["file"] == "water.wav")
        eventually(lambda: water().get("windows") == [{"from": "09:00", "to": "18:00", "days": ["mon", "fri"]}], "the window saved")
        if set(water()) != {"file", "windows"}:
            sys.exit(f"fields that did not change were written: {water()}")
        # A window the session cannot have is refused with the server's reason, and the dialog
        # stays open with what was typed.
        eventually(lambda: not browser.find_element(By.ID, "editor").is_displayed(), "the dialog closed after saving")
        tap("Edit walk")
        wait.until(ready.visibility_of_element_located((By.ID, "clip-windows")))
        field = browser.find_element(By.ID, "clip-windows")
        field.clear()
        field.send_keys("25:00-26:00")
        browser.find_element(By.CSS_SELECTOR, "#clip-form button[type=submit]").click()
        eventually(lambda: "25:00" in browser.find_element(By.ID, "clip-error").text, "the refused window's reason shown")
        if not browser.find_element(By.ID, "editor").is_displayed():
            sys.exit("the dialog closed on a refusal")
        browser.find_element(By.ID, "clip-cancel").click()
        if any("windows" in c for c in jukebox("session")["document"]["clips"] if c["file"] == "walk.wav"):
            sys.exit("a refused window was saved")
        # The schedule.
        for field_id, value in [("every-min", "2m"), ("every-max", "5m")]:
            field = browser.find_element(By.ID, field_id)
            field.clear()
            field.send_keys(value)
        for field_id, value in [("quiet-hours", "22:00-07:00, sunset-30m..sunset"), ("location", "52.37,4.89")]:
            field = browser.find_element(By.ID, field_id)
            field.clear()
            field.send_keys(value)
        browser.find_element(By.CSS_SELECTOR, "#schedule button[type=submit]").click()
        eventually(lambda: jukebox("session")["document"].get("interval") == {"min": "2m", "max": "5m"}, "the schedule saved")
        eventually(lambda: jukebox("session")["document"].get("quiet") == [{"from": "22:00", "to": "07:00"}, {"from": "sunset-30m", "to": "sunset"}], "the quiet hours saved")
        if jukebox("session")["document"].get("location") != {"latitude": 52.37, "longitude": 4.89}:
            sys.exit(f"the location was not saved: {jukebox('session')['document']}")
        # A fixed time, in the clip's dialog.
        tap("Edit walk")
        wait.until(ready.visibility_of_element_located((By.ID, "clip-at")))
        browser.find_element(By.ID, "clip-at").send_keys("07:55@mon-fri, sunset")
        browser.find_element(By.CSS_SELECTOR, "#clip-form button[type=submit]").click()
        def walk():
            return next(c for c in jukebox("session")["document"]["clips"] if c["file"] == "walk.wav")
        eventually(lambda: walk().get("at") == ["07:55@mon-fri", "sunset"], "the fixed times saved")
        eventually(lambda: not browser.find_element(By.ID, "editor").is_displayed(), "the dialog closed after saving")
        print("editing works")

        contrast_meets_aa("the page")
        # Everything works with the keyboard alone: Tab reaches every control, each shows
        # where the focus is, and Enter works the focused button.
        browser.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
        reached = []
        for _ in range(120):
            ActionChains(browser).send_keys(Keys.TAB).perform()
            name, outline = focused()
            if not name:
                continue
            if name in reached:
                break
            if outline == "none":
                sys.exit(f"the focus on {name!r} cannot be seen")
            reached.append(name)
        controls = browser.execute_script("""return [...document.querySelectorAll('#app button, #app input')]
            .filter((e) => e.getBoundingClientRect().width > 0 && !e.closest('dialog'))
            .map((e) => e.getAttribute('aria-label') || e.id || e.textContent.trim());""")
        missing = [name for name in controls if name not in reached]
        if missing:
            sys.exit(f"the keyboard cannot reach {missing} (reached {reached})")
        paused = jukebox("status")["paused"]
        browser.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
        for _ in range(len(reached) + 2):
            ActionChains(browser).send_keys(Keys.TAB).perform()
            if focused()[0] in ("pause", "resume"):
                break
        else:
            sys.exit(f"Tab never reached Pause or Resume ({reached})")
        which = focused()[0]
        ActionChains(browser).send_keys(Keys.ENTER).perform()
        eventually(lambda: jukebox("status")["paused"] is not paused, f"{which} worked with Enter (paused: {paused})")
        print("keyboard and contrast work")

        # Every control has an accessible name (read in one step: lists may be drawn again).
        unnamed = browser.execute_script("""return [...document.querySelectorAll('button, input')]
            .filter((e) => e.getBoundingClientRect().width > 0)
            .filter((e) => !(e.getAttribute('aria-label') || e.textContent.trim() || (e.labels && e.labels.length && e.labels[0].textContent.trim())))
            .map((e) => e.outerHTML.slice(0, 120));""")
        if unnamed:
            sys.exit(f"controls without an accessible name: {unnamed}")

        if args.screenshots:
            os.makedirs(args.screenshots, exist_ok=True)
            for width, height in [(390, 844), (1280, 800)]:
                browser.set_window_size(width, height)
                for scheme in ["light", "dark"]:
                    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
                    browser.save_screenshot(os.path.join(args.screenshots, f"remote-{width}x{height}-{scheme}.png"))
            print(f"screenshots in {args.screenshots}")
        print("all flows passed")
    finally:
        browser.quit()

if __name__ == "__main__":
    main()
