"""The web remote's page in headless Chromium at phone size (Debian's chromium and chromedriver,
driven by python3-selenium), as scripts/bench/web.py and scripts/bench/https.py load it."""
import statistics, time

# DOMContentLoaded, from the start of the navigation.
READY = "const t = performance.getEntriesByType('navigation')[0]; return t.domContentLoadedEventEnd - t.startTime;"
# First contentful paint, waited for if it has not happened yet.
CONTENTFUL_PAINT = """const done = arguments[arguments.length - 1];
    const find = () => performance.getEntriesByName('first-contentful-paint')[0];
    if (find()) return done(find().startTime);
    new PerformanceObserver(() => find() && done(find().startTime)).observe({ type: 'paint', buffered: true });"""

def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=390,844"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

def loads_in_one_browser(base, loads=10):
    """The page at `base` loaded loads + 1 times in one browser, as a phone that has the remote
    open loads it again; the first load, which fills the caches, is left out. Returns the medians
    of DOMContentLoaded and first contentful paint, in ms."""
    ready, paint = [], []
    browser = chromium()
    try:
        for _ in range(loads + 1):
            browser.get(base + "/?" + str(time.time()))
            ready.append(browser.execute_script(READY))
            paint.append(browser.execute_async_script(CONTENTFUL_PAINT))
    finally:
        browser.quit()
    return statistics.median(ready[1:]), statistics.median(paint[1:])
