"""Headless Chromium for the tests of Airflow's UI and the Connectors page: a driver, logging
in on Airflow's login form, and waits that survive a page refreshing itself."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = os.environ.get("CONNECT_UI_SCREENSHOTS")
"""A folder to keep the page's screenshots in (``docs/`` refreshes the committed ones)."""


class AirflowUI(Protocol):
    """An Airflow API server a browser logs in to."""

    url: str

    def password(self, user: str) -> str: ...


@contextmanager
def chromium(width: int = 1400, height: int = 1500) -> Iterator[WebDriver]:
    """Debian's Chromium, headless, through its chromedriver; quit on leaving."""
    assert CHROMIUM.exists() and CHROMEDRIVER.exists(), (
        "Chromium is required for the page's tests: apt-get install chromium chromium-driver "
        "(make test installs them)"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


def log_in(browser: WebDriver, server: AirflowUI, user: str, page: str) -> None:
    """Asks for ``page``, logs in on Airflow's login form it is sent to, and comes back."""
    browser.delete_all_cookies()
    browser.get(f"{server.url}{page}")
    wait = waiting(browser)
    wait.until(expected_conditions.url_contains("/auth/login"))
    wait.until(expected_conditions.presence_of_element_located((By.NAME, "username")))
    browser.find_element(By.NAME, "username").send_keys(user)
    browser.find_element(By.NAME, "password").send_keys(server.password(user))
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda b: "/auth/login" not in b.current_url)


def waiting(browser: WebDriver, timeout_s: float = 30) -> WebDriverWait[WebDriver]:
    """Waits past elements the page's refresh replaced while they were being looked at."""
    return WebDriverWait(
        browser,
        timeout_s,
        ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
    )


def click(browser: WebDriver, selector: str) -> None:
    """Clicks the element once it is there and clickable (found again if the page's refresh
    replaced it)."""
    waiting(browser).until(
        lambda b: (
            b.find_element(By.CSS_SELECTOR, selector).is_displayed()
            and (b.find_element(By.CSS_SELECTOR, selector).click() or True)
        )
    )


def text(browser: WebDriver, selector: str) -> str | None:
    """The element's text, read in one step in the page (None when it is not there)."""
    found = browser.execute_script(
        "const e = document.querySelector(arguments[0]); return e && e.innerText.trim();",
        selector,
    )
    return None if found is None else str(found)


def screenshot(browser: WebDriver, name: str, folder: Path) -> None:
    """Saves the window as ``name`` in ``folder``, and in ``CONNECT_UI_SCREENSHOTS`` when set."""
    browser.save_screenshot(str(folder / name))
    if SCREENSHOTS:
        shutil.copy(folder / name, Path(SCREENSHOTS) / name)
