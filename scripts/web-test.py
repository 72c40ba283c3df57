#!/usr/bin/env python3
"""Drives the phone page in Debian's Chromium with Selenium, against a running jukeboxd whose
state it checks with the jukebox command. Run by the Swift test WebPageTests, which starts and
stops the daemon; exits non-zero with the reason when a flow fails.

Usage: web-test.py --base URL --password PW --jukebox PATH --socket PATH --state PATH --wav PATH [--authority CA] [--screenshots DIR]
       web-test.py --flow restart --password PW --jukebox PATH --socket PATH [--authority CA]
       web-test.py --flow record --base URL --password PW --jukebox PATH --socket PATH --speech WAV [--authority CA]

With --authority, the page is served over HTTPS and Chromium trusts that certificate authority
the way a user's browser does: it is added to an NSS database (certutil, from libnss3-tools)
in a home folder of the test's own, not waved through with --ignore-certificate-errors.

The restart flow plays clips c0 and c1 by tapping them, across a restart of the daemon that
the caller makes: it reads the base URL on its standard input, prints "played c0", waits for
"stopped", prints "banner shown", waits for "started", and ends with "all flows passed".

The record flow records a clip with Chromium's fake microphone, which plays the WAV file given
with --speech: it checks the level meter and the timer, that the silence before and after the
words is trimmed, saves the clip with a title and a weight, taps it, and prints
"queued ID" (ID: the saved clip's) before "all flows passed"; the caller hears it played.
"""
import argparse, json, math, os, re, shutil, struct, subprocess, sys, tempfile, time, wave

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import Select, WebDriverWait

def main():
    # Whatever umask the test run hands down: Chromium cannot run in folders it made
    # without search permission.
    os.umask(0o022)
    parser = argparse.ArgumentParser()
    parser.add_argument("--flow", choices=["controls", "restart", "record"], default="controls")
    for name in ["--password", "--jukebox", "--socket"]:
        parser.add_argument(name, required=True)
    for name in ["--base", "--wav", "--state", "--screenshots", "--authority", "--speech"]:
        parser.add_argument(name)
    args = parser.parse_args()
    # The restart flow is told the address once the daemon listens, and so has made its
    # certificate authority: only then can the browser be given it.
    base = sys.stdin.readline().strip() if args.flow == "restart" else args.base
    home = None
    if args.authority:
        home = tempfile.mkdtemp(prefix="web-test-home-")
        nssdb = "sql:" + os.path.join(home, ".pki", "nssdb")
        os.makedirs(os.path.join(home, ".pki", "nssdb"))
        for command in [["certutil", "-d", nssdb, "-N", "--empty-password"],
                        ["certutil", "-d", nssdb, "-A", "-t", "C,,", "-n", "jukeboxd", "-i", args.authority]]:
            subprocess.run(command, check=True, capture_output=True)
        os.environ["HOME"] = home

    def jukebox(*words):
        result = subprocess.run([args.jukebox, "--socket", args.socket, "--json", *words], capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            sys.exit(f"jukebox {' '.join(words)} failed: {result.stderr}")
        return json.loads(result.stdout)

    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
        options.add_argument(flag)
    if args.speech:
        # A microphone that hears the file (looping), granted without asking.
        for flag in ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", f"--use-file-for-fake-audio-capture={args.speech}"]:
            options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # A phone's viewport: 390 × 844 CSS pixels, whatever the window's frame takes.
    browser.set_window_size(390, 844)
    viewport = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    if viewport[0] > 390:
        sys.exit(f"the page is not at phone size: {viewport}")
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
        by_id = f", button#{name.lower()}" if name.isidentifier() else ""
        return browser.find_element(By.CSS_SELECTOR, f'button[aria-label="{name}"]{by_id}')

    def press(element):
        # As a finger would: scrolled to the middle first, clear of the fixed bar.
        browser.execute_script("arguments[0].scrollIntoView({ block: 'center' })", element)
        element.click()

    def tap(name):
        # A list drawn again after an event replaces its buttons: find it again then.
        for _ in range(20):
            try:
                return press(button(name))
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

    # Colours as the browser computes them: parsed, their luminance and contrast, and what is
    # behind an element.
    COLOURS = """
        const parse = (text) => { const m = text.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
          const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return { rgb: p.slice(0, 3), alpha: p.length > 3 ? p[3] : 1 }; };
        const luminance = (rgb) => { const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
          return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        const ratio = (a, b) => { const x = luminance(a), y = luminance(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
        const behind = (element) => { for (let e = element; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
          if (c && c.alpha > 0.5) return c.rgb; } return parse(getComputedStyle(document.documentElement).backgroundColor)?.rgb || [255, 255, 255]; };
    """

    # WCAG AA: every visible text against what is behind it, 4.5:1 (3:1 when large).
    CONTRAST = COLOURS + """
        const failures = [];
        let checked = 0;
        for (const element of document.querySelectorAll("body *")) {
          const text = [...element.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim()
            || (element.matches("input:not([type=range]):not([type=file])") ? element.value : "");
          const box = element.getBoundingClientRect();
          if (!text || box.width === 0 || box.height === 0 || getComputedStyle(element).visibility === "hidden") continue;
          const style = getComputedStyle(element);
          const contrast = ratio(parse(style.color).rgb, behind(element));
          const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
          const needed = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
          checked += 1;
          if (contrast < needed) failures.push(`${element.tagName.toLowerCase()}#${element.id} "${text.slice(0, 30)}": ${contrast.toFixed(2)}:1`);
        }
        return [checked, failures];
    """

    # WCAG 1.4.11: a control's border against what is behind it, 3:1, unless its own fill
    # stands out that much; and every control at least 44 × 44 px (the slider included).
    CONTROLS = COLOURS + """
        const failures = [];
        let checked = 0;
        for (const control of document.querySelectorAll("button, input, select")) {
          const box = control.getBoundingClientRect();
          if (box.width <= 1 || box.height <= 1 || control.closest("[hidden]")) continue;
          const name = control.getAttribute("aria-label") || control.id || control.textContent.trim();
          checked += 1;
          if (box.width < 44 - 0.5 || box.height < 44 - 0.5) failures.push(`${name}: ${box.width.toFixed(0)}×${box.height.toFixed(0)} px`);
          const style = getComputedStyle(control);
          if (["checkbox", "range"].includes(control.type)) continue;
          const around = behind(control.parentElement);
          const fill = parse(style.backgroundColor);
          const border = parse(style.borderTopColor);
          const borderShows = parseFloat(style.borderTopWidth) >= 1 && border && border.alpha > 0.5 && ratio(border.rgb, around) >= 3;
          const fillShows = fill && fill.alpha > 0.5 && ratio(fill.rgb, around) >= 3;
          const tab = control.getAttribute("role") === "tab";
          if (!borderShows && !fillShows && !tab) failures.push(`${name}: its edge is ${border ? ratio(border.rgb, around).toFixed(2) : "?"}:1 against the page`);
        }
        return [checked, failures];
    """

    def contrast_meets_aa(where):
        for scheme in ["light", "dark"]:
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            checked, failures = browser.execute_script(CONTRAST)
            if checked < 3 or failures:
                sys.exit(f"{where}, {scheme}: contrast below WCAG AA for {failures} ({checked} texts checked)")
            controls, failures = browser.execute_script(CONTROLS)
            if controls < 1 or failures:
                sys.exit(f"{where}, {scheme}: controls below WCAG 1.4.11 or 44 px: {failures} ({controls} controls checked)")
            print(f"{where}, {scheme}: {checked} texts and {controls} controls meet WCAG AA")
            shot(f"{where.replace(' ', '-')}-{scheme}")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    steps = [0]
    def shot(name):
        # A screenshot per step, numbered in the order taken.
        if args.screenshots:
            os.makedirs(args.screenshots, exist_ok=True)
            steps[0] += 1
            browser.save_screenshot(os.path.join(args.screenshots, f"{steps[0]:02d}-{name}.png"))

    def focused():
        # The focused control's name and outline ("" when the focus is on the page itself).
        return browser.execute_script("""const e = document.activeElement;
            if (!e || e === document.body) return ['', 'none'];
            return [e.getAttribute('aria-label') || e.id || e.textContent.trim(), getComputedStyle(e).outlineStyle];""")

    def text_of(selector):
        # What an element says, whether or not its view is the one shown.
        return browser.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", selector)

    def view(name):
        browser.find_element(By.ID, f"tab-{name}").click()
        eventually(lambda: browser.find_element(By.ID, f"view-{name}").is_displayed(), f"the {name} view")

    def queued_on_page():
        return len(browser.find_elements(By.CSS_SELECTOR, "#queue li button"))

    # The Layout Instability API: every shift, with whether input came just before it.
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.shifts = [];
        new PerformanceObserver((list) => { for (const e of list.getEntries()) window.shifts.push({ at: e.startTime, value: e.value,
          sources: (e.sources || []).map((s) => s.node ? (s.node.id || s.node.className || s.node.nodeName) : "?") }); })
          .observe({ type: "layout-shift", buffered: true });
    """})

    def steady(action, what):
        # No shift above 0.01 within 500 ms of a tap.
        began = browser.execute_script("return performance.now()")
        action()
        time.sleep(0.6)
        moved = browser.execute_script("return window.shifts.filter((s) => s.at >= arguments[0] && s.at <= arguments[0] + 500)", began)
        total = sum(s["value"] for s in moved)
        if total > 0.01:
            sys.exit(f"the page moved after {what}: layout shift {total:.4f} ({moved})")
        print(f"layout shift within 500 ms of {what}: {total:.4f}")
        return total

    # No room held open by something empty: no element without words or a control in it
    # is taller than 8 px, in each view and in each dialog.
    GAPS = """return [...document.querySelectorAll('#app *')].filter((e) => {
        const box = e.getBoundingClientRect();
        if (box.height <= 8 || box.width === 0 || e.closest('dialog:not([open])')) return false;
        const things = 'input, select, button, progress, meter, canvas, output, textarea, svg, img, option';
        return !e.matches(things) && !e.querySelector(things) && e.textContent.trim() === '';
      }).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}: ${Math.round(e.getBoundingClientRect().height)} px`);"""
    def nothing_sideways(where):
        # Nothing wider than the screen: the page and every open dialog fit, so a finger that
        # scrolls up and down never moves them sideways.
        wide = browser.execute_script("""
            const found = [];
            if (document.documentElement.scrollWidth > innerWidth) found.push(`the page: ${document.documentElement.scrollWidth} px in ${innerWidth}`);
            for (const d of document.querySelectorAll('dialog[open]')) {
                if (d.scrollWidth > d.clientWidth) {
                    const out = [...d.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > d.getBoundingClientRect().right + 0.5)
                        .map(e => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className ? '.' + e.className : ''} ${Math.round(e.getBoundingClientRect().width)} px`);
                    found.push(`dialog#${d.id}: ${d.scrollWidth} px in ${d.clientWidth} (${out.slice(0, 5).join(', ')})`);
                }
            }
            return found;""")
        if wide:
            sys.exit(f"{where}: wider than the screen, so it moves sideways under a finger: {'; '.join(wide)}")
    def no_gaps(where):
        gaps = browser.execute_script(GAPS)
        if gaps:
            sys.exit(f"{where}: room held open by empty elements: {gaps}")
    def elapsed_seen(seconds):
        # The bar's place in the clip, read every 50 ms: (time, progress) pairs.
        seen = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            seen.append(tuple(browser.execute_script("return [document.getElementById('elapsed').textContent, document.getElementById('progress').value]")))
            time.sleep(0.05)
        return seen

    def restart_flow():
        browser.get(base + "/")
        wait.until(ready.visibility_of_element_located((By.ID, "login")))
        browser.find_element(By.ID, "password").send_keys(args.password)
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        wait.until(ready.visibility_of_element_located((By.ID, "app")))
        # A tap plays the clip (the test hears it in the sound card's capture); while it plays,
        # the bar moves on by itself between the events that start and end it.
        tap("Play c0")
        eventually(lambda: text_of("#now") == "c0", "c0 in the bar", seconds=10)
        # The bar's words: playing through the card now; neither playing nor paused after.
        within_a_second(lambda: text_of("#device").startswith("Playing through pulse · jukeboxd up "), f"the device line while c0 plays ({text_of('#device')!r})")
        seen = [progress for _, progress in elapsed_seen(1.5) if 0 < progress < 1]
        steps_seen = sorted(set(seen))
        if len(steps_seen) < 3 or seen != sorted(seen):
            sys.exit(f"the progress did not move on by itself while c0 played: {seen}")
        eventually(lambda: history_has("c0: completed"), "c0 played, in the page's history", seconds=10)
        eventually(lambda: text_of("#now") == "Nothing is playing." and text_of("#device").startswith("Speaker: pulse · "), f"the bar once c0 ended ({text_of('#device')!r})")
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
        within_a_second(lambda: text_of("#pause") == "Resume", "paused by the CLI after the restart")
        browser.find_element(By.ID, "pause").click()
        eventually(lambda: jukebox("status")["paused"] is False, "resumed from the page after the restart")
        tap("Play c1")
        eventually(lambda: history_has("c1: completed"), "c1 played after the restart", seconds=10)

    def log_in():
        browser.get(base + "/")
        wait.until(ready.visibility_of_element_located((By.ID, "login")))
        browser.find_element(By.ID, "password").send_keys(args.password)
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        WebDriverWait(browser, 60).until(ready.visibility_of_element_located((By.ID, "app")))

    def speech_figures(path):
        # The file's length, and where its words begin and end (the first and last sample
        # louder than -40 dBFS), in seconds.
        with wave.open(path) as file:
            rate, channels, width = file.getframerate(), file.getnchannels(), file.getsampwidth()
            frames = file.readframes(file.getnframes())
        if width != 2:
            sys.exit(f"{path}: expected 16-bit samples")
        samples = struct.unpack(f"<{len(frames) // 2}h", frames)[::channels]
        loud = [i for i, sample in enumerate(samples) if abs(sample) > 32768 * 10 ** (-40 / 20)]
        return len(samples) / rate, loud[0] / rate, loud[-1] / rate

    def record_flow():
        length, words_begin, words_end = speech_figures(args.speech)
        log_in()
        steady(lambda: press(browser.find_element(By.ID, "record")), "Record…")
        eventually(lambda: shown("recorder"), "the recorder")
        no_gaps("the recorder")
        contrast_meets_aa("the recorder")
        # The level meter, read every 50 ms while recording.
        browser.execute_script("window.levels = []; window.levelTimer = setInterval(() => window.levels.push(document.getElementById('record-level').value), 50);")
        steady(lambda: browser.find_element(By.ID, "record-toggle").click(), "Record")
        eventually(lambda: text_of("#record-toggle") == "Stop", "recording under way")
        # The microphone hears the file from its start: stop half a second before its end, so
        # the recording holds the silence before the words, the words, and silence after them.
        stop_at = length - 0.5
        eventually(lambda: text_of("#record-time") == f"0:{int(stop_at):02d}", f"the timer at 0:{int(stop_at):02d}", seconds=stop_at + 5)
        time.sleep(stop_at - int(stop_at))
        shot("recording")
        steady(lambda: browser.find_element(By.ID, "record-toggle").click(), "Stop")
        eventually(lambda: text_of("#record-toggle") == "Record again", "the recording stopped", seconds=10)
        levels = browser.execute_script("clearInterval(window.levelTimer); return window.levels")
        if max(levels) < 0.5:
            sys.exit(f"the level meter never showed the words (at most {max(levels):.2f}, of 1)")
        start = float(browser.find_element(By.ID, "trim-start").get_attribute("value"))
        end = float(browser.find_element(By.ID, "trim-end").get_attribute("value"))
        recorded = float(browser.find_element(By.ID, "trim-end").get_attribute("max"))
        words = words_end - words_begin
        print(f"recorded {recorded:.2f} s; kept {start:.2f} to {end:.2f} s ({end - start:.2f} s) for {words:.2f} s of words")
        if start < 0.3:
            sys.exit(f"the silence before the words was not trimmed: the clip starts at {start:.2f} s")
        if end > recorded - 0.1:
            sys.exit(f"the silence after the words was not trimmed: the clip ends at {end:.2f} s of {recorded:.2f} s")
        if not (words - 0.2 <= end - start <= words + 0.8):
            sys.exit(f"{end - start:.2f} s kept for {words:.2f} s of words")
        if "Keeps" not in text_of("#trim-text"):
            sys.exit(f"the recorder does not say what it keeps: {text_of('#trim-text')!r}")
        shot("recorded")
        contrast_meets_aa("the recorded clip")
        browser.find_element(By.ID, "record-title").send_keys("Water the plants")
        weight = browser.find_element(By.ID, "record-weight")
        weight.clear()
        weight.send_keys("2")
        steady(lambda: press(browser.find_element(By.ID, "record-save")), "Save the recording")
        eventually(lambda: not shown("recorder") or "problem" in browser.find_element(By.ID, "record-message").get_attribute("class"),
                   "the recorder closed after Save", seconds=15)
        if shown("recorder"):
            sys.exit(f"the recording was not saved: {text_of('#record-message')}")
        eventually(lambda: "Added Water the plants." in text_of("#toasts"), f"the toast for the recording (the page says {text_of('#toasts')!r}; login shown: {shown('login')})")
        clip = next((c for c in jukebox("clips")["clips"] if c["title"] == "Water the plants"), None)
        if not clip:
            sys.exit(f"the recording is not in the session: {jukebox('clips')}")
        written = next((c for c in jukebox("session")["document"]["clips"] if c.get("title") == "Water the plants"), {})
        if written.get("weight") != 2:
            sys.exit(f"the recording is in the session file as {written}, not with weight 2")
        if abs(clip["duration"] - (end - start)) > 0.1:
            sys.exit(f"the saved clip is {clip['duration']:.2f} s long, not the {end - start:.2f} s kept")
        tap("Play Water the plants")
        print(f"queued {clip['id']}", flush=True)
        eventually(lambda: history_has("Water the plants: completed"), "the recording played", seconds=15)
        shot("recording-played")

    try:
        if args.flow == "restart":
            restart_flow()
            print("all flows passed")
            return
        if args.flow == "record":
            record_flow()
            print("all flows passed")
            return
        browser.get(args.base + "/")
        wait.until(ready.visibility_of_element_located((By.ID, "login")))
        contrast_meets_aa("the login page")
        if args.authority:
            # Over HTTPS the page offers the certificate authority for another device.
            if not browser.find_element(By.CSS_SELECTOR, "#login .ca-link").is_displayed():
                sys.exit("the login page does not offer the certificate authority over HTTPS")
            offered = browser.execute_async_script("const done = arguments[0]; fetch('ca.crt').then((r) => r.text()).then(done, (e) => done(String(e)));")
            if offered != open(args.authority).read():
                sys.exit(f"the page's ca.crt is not the daemon's certificate authority: {offered[:100]}")
        # A wrong password is refused, in plain words.
        browser.find_element(By.ID, "password").send_keys("not it")
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        wait.until(lambda _: "not the password" in browser.find_element(By.ID, "login-error").text)
        # The right one opens the page.
        field = browser.find_element(By.ID, "password")
        field.clear()
        field.send_keys(args.password)
        browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
        # The first right password is hashed (600 000 rounds of PBKDF2): allow a slow CPU.
        WebDriverWait(browser, 60).until(ready.visibility_of_element_located((By.ID, "app")))
        shot("clips")
        # About, at the end of History: the daemon's version, as `jukebox status` gives it.
        eventually(lambda: text_of("#about").startswith(f"jukeboxd {jukebox('status')['version']}, playing "), f"the version under History ({text_of('#about')!r})")
        print("logged in")

        # What will happen: the next random pick, an hour away; paused, nothing is planned.
        view("plan")
        eventually(lambda: "Next random pick" in browser.find_element(By.ID, "next").text, "the next pick under Coming up")
        # What the command line does shows on the page within a second, without moving it.
        jukebox("pause")
        within_a_second(lambda: browser.find_element(By.ID, "next").text == "Nothing planned.", "nothing planned while paused")
        within_a_second(lambda: text_of("#pause") == "Resume", "paused by the CLI")
        # The bar says paused in words, and never "playing" while nothing plays.
        within_a_second(lambda: text_of("#now") == "Paused. Nothing is playing.", f"the bar while paused ({text_of('#now')!r})")
        if "Playing" in text_of("#device") or "(" in text_of("#device"):
            sys.exit(f"the device line while paused and idle: {text_of('#device')!r}")
        view("clips")
        before = browser.execute_script("return window.shifts.length")
        jukebox("play", "water", "walk")
        within_a_second(lambda: queued_on_page() == 2, "two clips queued by the CLI")
        time.sleep(0.3)
        moved = browser.execute_script("return window.shifts.slice(arguments[0])", before)
        if sum(s["value"] for s in moved) > 0.01:
            sys.exit(f"the clips moved when the CLI queued two: {moved}")
        print("CLI changes shown")

        # Resume and pause from the bar: one button, in one place.
        steady(lambda: browser.find_element(By.ID, "pause").click(), "Resume")
        eventually(lambda: jukebox("status")["paused"] is False, "resumed from the page")
        eventually(lambda: text_of("#pause") == "Pause", "the button says Pause")
        eventually(lambda: "Playing again." in text_of("#toasts"), "a toast after Resume")
        steady(lambda: browser.find_element(By.ID, "pause").click(), "Pause")
        eventually(lambda: jukebox("status")["paused"] is True, "paused from the page")
        eventually(lambda: "Paused." in text_of("#toasts"), "a toast after Pause")
        shot("paused")

        # Play a clip by tapping its card: the cards stay where they are.
        waiting = len(jukebox("queue")["waiting"])
        # A clip the pause caught part-way: the urgent clip below cuts it, and it waits again.
        caught = jukebox("queue").get("playing") is not None
        steady(lambda: tap("Play walk"), "a tap on a clip")
        eventually(lambda: len(jukebox("queue")["waiting"]) == waiting + 1, "a clip queued by tapping it")
        eventually(lambda: "Queued walk." in text_of("#toasts"), "a toast after a tap on a clip")
        waiting += 1
        eventually(lambda: queued_on_page() == waiting, "the tapped clip in the queue")
        steady(lambda: tap("Play water"), "a second tap on a clip")
        eventually(lambda: queued_on_page() == waiting + 1, "the second tapped clip in the queue")
        waiting += 1
        shot("queued")

        # With the session's cue, from the clip's menu.
        tap("More for water")
        eventually(lambda: shown("menu"), "the clip's menu")
        shot("menu")
        tap("Play water with the cue")
        eventually(lambda: any(e.get("cue") for e in json.load(open(args.state))["waiting"]), "a clip queued with the cue")
        waiting += 1
        # Now, from the clip's menu: it goes first, and the queue says why.
        tap("More for walk")
        eventually(lambda: shown("menu"), "the clip's menu")
        tap("Play walk now, cutting in")
        eventually(lambda: jukebox("queue")["waiting"][0].get("now") is True, "a clip queued now from its menu")
        eventually(lambda: "Playing walk now." in text_of("#toasts"), "a toast after Play now")
        waiting += 1 + (1 if caught else 0)
        eventually(lambda: queued_on_page() == waiting and "walk (from this page, now)" in text_of("#queue"), "the urgent clip first in the queue")

        # Remove an entry, in the queue view.
        view("queue")
        eventually(lambda: queued_on_page() == waiting, "the clip with the cue in the queue")
        shot("queue")
        tap("Remove walk")
        eventually(lambda: len(jukebox("queue")["waiting"]) == waiting - 1, "an entry removed from the page")
        waiting -= 1

        # The volume follows the slider.
        browser.execute_script("const v = document.getElementById('volume'); v.value = 37; v.dispatchEvent(new Event('input'));")
        eventually(lambda: jukebox("volume")["volume"] == 37, "the volume set by the slider")
        # An announcement, typed and sent.
        browser.find_element(By.ID, "say-text").send_keys("Dinner is ready")
        steady(lambda: browser.find_element(By.CSS_SELECTOR, "#say button[type=submit]").click(), "Say")
        eventually(lambda: any(e.get("say") == "Dinner is ready" for e in jukebox("queue")["waiting"]), "an announcement queued from the page")
        eventually(lambda: any("say: Dinner is ready" in e.text for e in browser.find_elements(By.CSS_SELECTOR, "#queue li")), "the announcement in the queue list")
        eventually(lambda: "Queued “Dinner is ready”." in text_of("#toasts"), "the announcement's toast")
        # And one said now: it goes in after the urgent clip, before everything else.
        browser.find_element(By.ID, "say-text").send_keys("Fire drill")
        steady(lambda: browser.find_element(By.ID, "say-now").click(), "Now")
        def said_now():
            waiting = jukebox("queue")["waiting"]
            ahead = next((i for i, e in enumerate(waiting) if e.get("say") == "Fire drill"), None)
            return ahead is not None and waiting[ahead].get("now") is True and all(e.get("now") for e in waiting[:ahead])
        eventually(said_now, "an announcement queued now from the page, ahead of all but urgent entries")
        eventually(lambda: "Saying “Fire drill” now." in text_of("#toasts"), "the announcement's toast after Now")
        # A toast lets taps through to what is under it.
        if browser.execute_script("return getComputedStyle(document.querySelector('#toasts .toast')).pointerEvents") != "none":
            sys.exit("a toast takes the taps meant for what is under it")
        # Clearing the queue asks first: Cancel keeps it, Clear empties it.
        waiting = len(jukebox("queue")["waiting"])
        tap("clear")
        eventually(lambda: shown("confirm"), "the question before clearing the queue")
        shot("clear-asked")
        browser.find_element(By.ID, "confirm-no").click()
        eventually(lambda: not shown("confirm"), "the question closed by Cancel")
        if len(jukebox("queue")["waiting"]) != waiting or waiting == 0:
            sys.exit(f"Cancel did not keep the queue of {waiting}: {jukebox('queue')}")
        tap("clear")
        eventually(lambda: shown("confirm"), "the question again")
        browser.find_element(By.ID, "confirm-yes").click()
        eventually(lambda: len(jukebox("queue")["waiting"]) == 0, "the queue cleared after Clear")
        print("controls work")

        # Quiet by hand from the page; a request made to wait for its end shows as held, and
        # is queued once quiet is ended from the page.
        view("plan")
        browser.find_element(By.ID, "quiet").click()
        eventually(lambda: jukebox("quiet")["quiet"] is True, "quiet turned on from the page")
        within_a_second(lambda: browser.find_element(By.ID, "quiet-state").text == "Quiet, set by hand until turned off", "the quiet state")
        waiting = len(jukebox("queue")["waiting"])
        jukebox("play", "--after-quiet", "walk")
        within_a_second(lambda: "after quiet" in text_of("#queue"), "the held request in the queue list")
        within_a_second(lambda: "(1 waiting for it to end)" in browser.find_element(By.ID, "quiet-state").text, "the held count")
        shot("quiet")
        browser.find_element(By.ID, "quiet").click()
        eventually(lambda: jukebox("quiet")["quiet"] is False, "quiet ended from the page")
        eventually(lambda: len(jukebox("queue")["waiting"]) == waiting + 1, "the held request queued when quiet ended")
        within_a_second(lambda: browser.find_element(By.ID, "quiet").text == "Be quiet", "the Be quiet button back")
        # Quiet for a while, chosen beside the button, as `jukebox quiet for 30m`.
        Select(browser.find_element(By.ID, "quiet-for")).select_by_value("30m")
        browser.find_element(By.ID, "quiet").click()
        eventually(lambda: jukebox("quiet")["quiet"] is True and jukebox("quiet").get("until") is not None, "quiet for 30 minutes from the page")
        until = jukebox("quiet")["until"]
        if not 29 * 60 <= until - time.time() <= 31 * 60:
            sys.exit(f"quiet for 30 minutes ends in {until - time.time():.0f} s")
        within_a_second(lambda: re.search(r"Quiet, set by hand until \w+ ([01]\d|2[0-3]):[0-5]\d$", browser.find_element(By.ID, "quiet-state").text), f"the end of quiet, on a 24-hour clock ({text_of('#quiet-state')!r})")
        browser.find_element(By.ID, "quiet").click()
        eventually(lambda: jukebox("quiet")["quiet"] is False, "quiet for a while ended from the page")
        print("quiet works")

        # Today's day plan and why; changed by hand for today after a question, told back at
        # once, and back to as planned the same way.
        within_a_second(lambda: text_of("#today-state").startswith("regular (days rule 1 (every day))"), f"today's plan ({text_of('#today-state')!r})")
        def change_plan(day, choice):
            Select(browser.find_element(By.ID, "plan-day")).select_by_value(day)
            Select(browser.find_element(By.ID, "plan-choice")).select_by_value(choice)
            browser.find_element(By.ID, "plan-set").click()
            eventually(lambda: shown("confirm"), "the question before changing a day's plan")
            browser.find_element(By.ID, "confirm-yes").click()
        change_plan("today", "exam")
        eventually(lambda: jukebox("plan", "--days", "1")[0]["plan"] == "exam", "today's plan changed from the page")
        why = jukebox("plan", "--days", "1")[0]["why"]
        if not why.startswith("set by hand (web, "):
            sys.exit(f"today's plan set from the page says why: {why!r}")
        within_a_second(lambda: text_of("#today-state").startswith("exam (set by hand (web, "), f"today's plan told back ({text_of('#today-state')!r})")
        change_plan("tomorrow", "exam")
        eventually(lambda: jukebox("plan", "--days", "2")[1]["plan"] == "exam", "tomorrow's plan changed from the page")
        change_plan("today", "")
        eventually(lambda: jukebox("plan", "--days", "1")[0]["plan"] == "regular", "today as planned again from the page")
        within_a_second(lambda: text_of("#today-state").startswith("regular (days rule 1"), f"today as planned, told back ({text_of('#today-state')!r})")
        shot("plans")
        print("day plans work")

        # An alert, started after a question, shown at the top of every view in the title's
        # place, and ended from there after another question.
        Select(browser.find_element(By.ID, "alert-name")).select_by_value("lockdown")
        browser.find_element(By.ID, "alert-start").click()
        eventually(lambda: shown("confirm"), "the question before starting an alert")
        browser.find_element(By.ID, "confirm-yes").click()
        eventually(lambda: (jukebox("alert")["alert"] or {}).get("name") == "lockdown", "the alert started from the page")
        if jukebox("alert")["alert"]["by"] != "web":
            sys.exit(f"the alert says who started it: {jukebox('alert')}")
        within_a_second(lambda: shown("alert-on") and text_of("#alert-text") == "Alert: lockdown" and not shown("title"), "the alert at the top")
        shot("alert")
        view("queue")
        within_a_second(lambda: shown("alert-on"), "the alert at the top of another view")
        browser.find_element(By.ID, "alert-end").click()
        eventually(lambda: shown("confirm"), "the question before ending an alert")
        browser.find_element(By.ID, "confirm-yes").click()
        eventually(lambda: jukebox("alert")["alert"] is None, "the alert ended from the page")
        within_a_second(lambda: not shown("alert-on") and shown("title"), "the title back at the top")
        view("plan")
        print("alerts work")

        # The music bed's music, off and on from the page; kept in the state file.
        within_a_second(lambda: browser.find_element(By.ID, "music").is_displayed(), "the Music button, for a session with a bed")
        press(browser.find_element(By.ID, "music"))
        eventually(lambda: jukebox("bed")["on"] is False, "music turned off from the page")
        eventually(lambda: json.load(open(args.state)).get("musicOff") is True, "music off in the state file")
        within_a_second(lambda: browser.find_element(By.ID, "music").text == "Music on", "the Music on button")
        within_a_second(lambda: browser.find_element(By.ID, "music-state").text.startswith("Music off. No music coming in"), "the music's state")
        jukebox("bed", "on")
        within_a_second(lambda: browser.find_element(By.ID, "music").text == "Music off", "the page told of music on by another client")
        print("music works")

        # A test tone from the page: played through the session's device, and said so.
        jukebox("resume")
        press(browser.find_element(By.ID, "sound-test"))
        eventually(lambda: any(play["entry"]["clip"] == "test" and play["outcome"] == "completed" for play in jukebox("history")["plays"]), "the test tone played")
        within_a_second(lambda: re.search(r"(Played through|took the tone in) ", browser.find_element(By.ID, "sound-state").text) is not None, "what the test found")
        print("the sound test works")

        # Upload a WAV; it shows in the list and can be played.
        view("clips")
        browser.find_element(By.ID, "upload").send_keys(args.wav)
        eventually(lambda: "Added" in text_of("#toasts"), "the upload accepted", seconds=10)
        name = os.path.splitext(os.path.basename(args.wav))[0]
        eventually(lambda: any(c["id"] == name for c in jukebox("clips")["clips"]), "the uploaded clip in the session")
        eventually(lambda: len(browser.find_elements(By.CSS_SELECTOR, f'button[aria-label="Play {name}"]')) == 1, "the uploaded clip on the page")
        # A refusal is said in plain words beside the button, the server's own behind
        # "Details", and adds nothing.
        notes = os.path.join(os.path.dirname(args.wav), "notes.wav")
        with open(notes, "w") as out:
            out.write("not audio at all")
        clips_before = len(jukebox("clips")["clips"])
        browser.find_element(By.ID, "upload").send_keys(notes)
        eventually(lambda: "notes.wav is not sound jukeboxd can play" in text_of("#toasts"), "the refusal in plain words", seconds=10)
        if "cannot be played" not in text_of("#toasts details"):
            sys.exit(f"the server's words are not behind Details: {text_of('#toasts')!r}")
        if ".part" in text_of("#toasts") or ".upload-" in text_of("#toasts"):
            sys.exit(f"the refusal shows the server's own file: {text_of('#toasts')!r}")
        if browser.find_element(By.ID, "upload-progress").is_displayed():
            sys.exit("the upload's progress bar shows with no upload under way")
        shot("upload-refused")
        if len(jukebox("clips")["clips"]) != clips_before:
            sys.exit("a refused upload was added")
        print("upload works")

        # Disable from the menu: the card says so, in its place.
        steady(lambda: (tap("More for walk"), eventually(lambda: shown("menu"), "the menu"), tap("Disable walk")), "Disable")
        eventually(lambda: any(c["id"] == "walk" and not c["enabled"] for c in jukebox("clips")["clips"]), "walk disabled from its menu")
        eventually(lambda: "disabled" in text_of('#clips li[data-clip="walk"] .meta'), "the card says disabled")

        # A clip's window, with time pickers and day chips; the session file gets it.
        tap("More for water")
        tap("Edit water")
        wait.until(ready.visibility_of_element_located((By.ID, "clip-windows")))
        tap("Add to window")
        def set_value(selector, value):
            browser.execute_script("const e = document.querySelector(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event('change'));", selector, value)
        set_value('#clip-windows input[aria-label="Window 1 to"]', "18:00")
        for day in ["tue", "wed", "thu", "sat", "sun"]:
            tap(f"Window 1 on {day}")
        shot("window-editor")
        nothing_sideways("the clip's dialog with a window")
        steady(lambda: browser.find_element(By.CSS_SELECTOR, "#clip-form button[type=submit]").click(), "Save")
        def water():
            return next(c for c in jukebox("session")["document"]["clips"] if c["file"] == "water.wav")
        eventually(lambda: water().get("windows") == [{"from": "09:00", "to": "18:00", "days": ["mon", "fri"]}], "the window saved")
        if set(water()) != {"file", "windows"}:
            sys.exit(f"fields that did not change were written: {water()}")
        eventually(lambda: not browser.find_element(By.ID, "editor").is_displayed(), "the dialog closed after saving")
        # A window the session cannot have (a sun time, with no location yet) is refused in
        # plain words next to Save, the dialog stays open, and nothing is saved.
        tap("More for walk")
        tap("Edit walk")
        wait.until(ready.visibility_of_element_located((By.ID, "clip-windows")))
        tap("Add to window")
        set_value('#clip-windows select[aria-label="Window 1 from: at"]', "sunset")
        steady(lambda: browser.find_element(By.CSS_SELECTOR, "#clip-form button[type=submit]").click(), "a refused Save")
        eventually(lambda: "Not saved: a sun time needs the session's location" in browser.find_element(By.ID, "clip-error").text, "the refused window's reason shown")
        if "s.json:" in browser.find_element(By.ID, "clip-error").text:
            sys.exit(f"the reason reads like a compiler: {browser.find_element(By.ID, 'clip-error').text!r}")
        shot("window-refused")
        if not browser.find_element(By.ID, "editor").is_displayed():
            sys.exit("the dialog closed on a refusal")
        browser.find_element(By.ID, "clip-cancel").click()
        if any("windows" in c for c in jukebox("session")["document"]["clips"] if c["file"] == "walk.wav"):
            sys.exit("a refused window was saved")

        # The schedule: gaps, quiet hours with a sun time, and the place.
        view("plan")
        for field_id, value in [("every-min", "2m"), ("every-max", "5m"), ("location", "52.37,4.89")]:
            field = browser.find_element(By.ID, field_id)
            field.clear()
            field.send_keys(value)
        tap("Add to quiet hours")
        set_value('#quiet-hours input[aria-label="Quiet hours 1 from"]', "22:00")
        set_value('#quiet-hours input[aria-label="Quiet hours 1 to"]', "07:00")
        tap("Add to quiet hours")
        set_value('#quiet-hours select[aria-label="Quiet hours 2 from: at"]', "sunset")
        set_value('#quiet-hours input[aria-label="Quiet hours 2 from: minutes after (before, if negative)"]', "-30")
        set_value('#quiet-hours select[aria-label="Quiet hours 2 to: at"]', "sunset")
        shot("schedule")
        steady(lambda: press(browser.find_element(By.CSS_SELECTOR, "#schedule button[type=submit]")), "Save the schedule")
        eventually(lambda: jukebox("session")["document"].get("interval") == {"min": "2m", "max": "5m"}, "the schedule saved")
        eventually(lambda: jukebox("session")["document"].get("quiet") == [{"from": "22:00", "to": "07:00"}, {"from": "sunset-30m", "to": "sunset"}], "the quiet hours saved")
        if jukebox("session")["document"].get("location") != {"latitude": 52.37, "longitude": 4.89}:
            sys.exit(f"the location was not saved: {jukebox('session')['document']}")
        eventually(lambda: "Schedule saved." in text_of("#toasts"), "the schedule's toast")
        # Coming up, on a 24-hour clock as the CLI gives it, whatever the browser's language.
        eventually(lambda: re.search(r"\b([01]\d|2[0-3]):[0-5]\d\b", text_of("#next")) is not None, f"a time under Coming up ({text_of('#next')!r})")
        if re.search(r"\b(AM|PM|am|pm)\b", text_of("#next") + text_of("#history")):
            sys.exit(f"12-hour times: {text_of('#next')!r} {text_of('#history')!r}")
        # Loaded again, the sun time shows in its picker.
        eventually(lambda: browser.execute_script("return document.querySelector('#quiet-hours select[aria-label=\"Quiet hours 2 from: at\"]').value") == "sunset", "the sun time loaded back")
        # A fixed time, in the clip's dialog.
        view("clips")
        tap("More for walk")
        tap("Edit walk")
        wait.until(ready.visibility_of_element_located((By.ID, "clip-at")))
        browser.find_element(By.ID, "clip-at").send_keys("07:55@mon-fri, sunset")
        browser.find_element(By.CSS_SELECTOR, "#clip-form button[type=submit]").click()
        def walk():
            return next(c for c in jukebox("session")["document"]["clips"] if c["file"] == "walk.wav")
        eventually(lambda: walk().get("at") == ["07:55@mon-fri", "sunset"], "the fixed times saved")
        eventually(lambda: not browser.find_element(By.ID, "editor").is_displayed(), "the dialog closed after saving")
        print("editing works")

        for name in ["clips", "queue", "plan"]:
            view(name)
            no_gaps(f"the {name} view")
            nothing_sideways(f"the {name} view")
            contrast_meets_aa(f"the {name} view")
        view("clips")
        tap("More for water")
        tap("Edit water")
        wait.until(ready.visibility_of_element_located((By.ID, "editor")))
        no_gaps("the clip's dialog")
        nothing_sideways("the clip's dialog")
        contrast_meets_aa("the clip's dialog")
        browser.find_element(By.ID, "clip-cancel").click()
        print("no gaps held open")
        view("clips")
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
            .filter((e) => e.getBoundingClientRect().width > 1 && !e.closest('dialog') && !e.disabled && e.tabIndex >= 0)
            .map((e) => e.getAttribute('aria-label') || e.id || e.textContent.trim());""")
        missing = [name for name in controls if name not in reached]
        if missing:
            sys.exit(f"the keyboard cannot reach {missing} (reached {reached})")
        paused = jukebox("status")["paused"]
        browser.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
        for _ in range(len(reached) + 2):
            ActionChains(browser).send_keys(Keys.TAB).perform()
            if focused()[0] == "pause":
                break
        else:
            sys.exit(f"Tab never reached Pause ({reached})")
        ActionChains(browser).send_keys(Keys.ENTER).perform()
        eventually(lambda: jukebox("status")["paused"] is not paused, f"Pause worked with Enter (paused: {paused})")
        print("keyboard and contrast work")

        # Every control has an accessible name (read in one step: lists may be drawn again).
        unnamed = browser.execute_script("""return [...document.querySelectorAll('button, input, select')]
            .filter((e) => e.getBoundingClientRect().width > 0)
            .filter((e) => !(e.getAttribute('aria-label') || e.textContent.trim() || (e.labels && e.labels.length && e.labels[0].textContent.trim())))
            .map((e) => e.outerHTML.slice(0, 120));""")
        if unnamed:
            sys.exit(f"controls without an accessible name: {unnamed}")

        # Installable: Chromium finds nothing missing, and the service worker keeps the page's
        # own files only, never the API.
        errors = browser.execute_cdp_cmd("Page.getInstallabilityErrors", {}).get("installabilityErrors", [])
        if errors:
            sys.exit(f"not installable: {errors}")
        kept = browser.execute_async_script("""const done = arguments[arguments.length - 1];
            navigator.serviceWorker.ready.then(() => caches.open('jukeboxd-shell')).then((c) => c.keys())
              .then((keys) => done(keys.map((k) => new URL(k.url).pathname).sort()), (e) => done(String(e)));""")
        if kept != sorted(["/", "/app.js", "/style.css", "/icon.svg", "/manifest.webmanifest"]):
            sys.exit(f"the service worker keeps {kept}")
        print("installable")

        if args.screenshots:
            for width, height in [(390, 844), (1280, 800)]:
                browser.set_window_size(width, height)
                for scheme in ["light", "dark"]:
                    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
                    browser.save_screenshot(os.path.join(args.screenshots, f"remote-{width}x{height}-{scheme}.png"))
            browser.set_window_size(390, 844)
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
            print(f"screenshots in {args.screenshots}")

        # Logging out: the page asks for the password again, and the old cookie opens nothing.
        browser.find_element(By.ID, "logout").click()
        eventually(lambda: shown("login") and not shown("app"), "the login after Log out")
        status = browser.execute_async_script("""const done = arguments[arguments.length - 1];
            fetch('/rpc', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"status"}' })
              .then((r) => done(r.status), (e) => done(String(e)));""")
        if status != 401:
            sys.exit(f"after Log out, /rpc answered {status}")
        # Too many wrong passwords: the wait counts down on the page.
        for _ in range(6):
            field = browser.find_element(By.ID, "password")
            field.clear()
            field.send_keys("wrong again")
            # Emptied first, so the answer to this attempt is seen when its words appear.
            browser.execute_script("document.getElementById('login-error').textContent = ''")
            browser.find_element(By.CSS_SELECTOR, "#login button[type=submit]").click()
            eventually(lambda: browser.find_element(By.ID, "login-error").text != "", "the answer to a wrong password")
            if "Try again in" in browser.find_element(By.ID, "login-error").text:
                break
        def wait_left():
            text = browser.find_element(By.ID, "login-error").text
            return int(text.split("Try again in ")[1].split(" s")[0]) if "Try again in " in text else None
        eventually(lambda: wait_left() is not None, "the wait after too many wrong passwords")
        first = wait_left()
        eventually(lambda: (wait_left() or first) < first, "the wait counting down", seconds=3)
        shot("login-throttled")
        print("logout works")
        print("all flows passed")
    finally:
        browser.quit()
        if home:
            shutil.rmtree(home, ignore_errors=True)

if __name__ == "__main__":
    main()
