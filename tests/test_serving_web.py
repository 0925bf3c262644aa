"""The consultant's web page in headless Chromium (Debian's chromium + chromium-driver, driven by Selenium):
load the page, hold a consultation, see the parameter table fill in and the recommended policy with its plots
(simulated inventory, cost per candidate), ask "how much should I order now" through the form and download the
deployment artifacts, with no JavaScript errors. The screenshot goes to $ASKOPT_SCREENSHOT_DIR (default: pytest's tmp dir)."""

import os
import shutil
import socket
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FACTS = [
    "I run a bike shop. We sell about 8 bikes a day, it varies like a Poisson process.",
    "I plan for 90 days. Bikes don't spoil.",
    "If we are out of stock the customer just leaves, the sale is lost.",
    "Holding a bike costs me 50 cents per day. A lost sale costs me $2.83.",
    "Each order costs $3 in fees. Delivery takes 2 days. Risk: neutral, 0.",
    "I can store at most 80 bikes and the supplier ships at most 25 per order.",
    "yes",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def page_url(tmp_path_factory):
    if not (CHROMIUM and DRIVER):
        print("SKIP reason: Debian's chromium / chromium-driver are not installed "
              "(apt-get install -y chromium chromium-driver)")
        pytest.skip("chromium or chromedriver not installed")
    pytest.importorskip("selenium", reason="selenium not installed")
    import ray  # a core dependency: an import error must fail, not skip
    from ray import serve

    from serving.consultant_app import build_app

    port = _free_port()
    db = tmp_path_factory.mktemp("web") / "sessions.db"
    ray.init(address="local", num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(build_app({"sessions_url": f"sqlite:///{db}", "num_cpus": 0.25}), name="web", route_prefix="/")
    yield f"http://127.0.0.1:{port}/"
    try:
        serve.shutdown()
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_a_consultation_in_the_browser(page_url, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1300,1100"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    try:
        driver.get(page_url)
        wait = WebDriverWait(driver, 60)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chat .msg.assistant"))
        rows = driver.find_elements(By.CSS_SELECTOR, "#params tbody tr")
        assert len(rows) == 12 and all(r.get_attribute("class") == "undefined" for r in rows)

        def send(text: str, replies: int) -> None:
            box = driver.find_element(By.ID, "message")
            box.send_keys(text)
            driver.find_element(By.ID, "send").click()
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chat .msg.assistant")) >= replies)

        send(FACTS[0], 2)  # the table updates live: demand is now defined
        demand = driver.find_element(By.CSS_SELECTOR, 'tr[data-param="demand_distribution"]')
        assert demand.get_attribute("class") == "defined"
        assert demand.find_element(By.CSS_SELECTOR, "td.value").text == "poisson(8)"
        for i, fact in enumerate(FACTS[1:], start=3):
            send(fact, i)
        WebDriverWait(driver, 180).until(lambda d: d.find_element(By.ID, "policy").is_displayed())
        assert driver.find_element(By.ID, "policy-text").text
        bars = driver.find_elements(By.CSS_SELECTOR, "#cost-plot rect.bar")
        assert len(bars) >= 2  # one bar of simulated cost per candidate policy
        assert len(driver.find_elements(By.CSS_SELECTOR, "#cost-plot rect.winner")) == 1
        assert driver.find_element(By.CSS_SELECTOR, 'tr[data-param="max_order"] td.value').text == "25"
        # the simulated inventory plot (an SVG the server draws): one point per day of the 90-day horizon
        WebDriverWait(driver, 180).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#inventory-svg polyline.mean"))
        mean = driver.find_element(By.CSS_SELECTOR, "#inventory-svg polyline.mean").get_attribute("points")
        assert len(mean.split()) == 90
        assert driver.find_elements(By.CSS_SELECTOR, "#inventory-svg polygon.band")
        # "how much should I order now": the interpretation agent's tool through the form
        driver.find_element(By.ID, "on-hand").send_keys("2")
        driver.find_element(By.ID, "order-button").click()
        WebDriverWait(driver, 180).until(lambda d: d.find_element(By.ID, "order-answer").text)
        answer = driver.find_element(By.ID, "order-answer").text
        assert answer.startswith("Order ") and "stock position 2" in answer, answer
        # a download of the deployment artifacts lands as a file
        driver.find_element(By.ID, "dl-csv").click()
        target = downloads / "policy_evaluation_results.csv"
        WebDriverWait(driver, 180).until(lambda d: target.exists() and target.stat().st_size > 0)
        assert target.read_text().startswith("policy,label,role,s,S,mean_cost")
        shots = Path(os.environ.get("ASKOPT_SCREENSHOT_DIR", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(shots / "consultation.png"))
        print(f"screenshot: {shots / 'consultation.png'}")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == [], errors
        driver.get(page_url + "docs")  # the API page works offline too
        WebDriverWait(driver, 30).until(lambda d: "/v1/solve" in d.find_element(By.ID, "routes").text)
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()
