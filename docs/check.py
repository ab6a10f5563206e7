"""Checks the built guide (target/book: `bash scripts/passlab.sh book`) as
a reader would find it:

* every chapter that docs/src/SUMMARY.md lists is a page of the book,
  with its title;
* every link of every page leads somewhere: a relative link names a file
  of the book (the lessons are there as HTML, under lessons/), a
  `#fragment` names an element on its page (read from the built HTML);
* in Debian's headless Chromium, served over HTTP: the first page shows
  the chapter list, and the search finds pages for words a reader would
  look for (typed into the search box, as a reader types);
* screenshots of the first page and of a search go to target/browser/
  (book.png, book-search.png).

    python docs/check.py
"""

import functools
import html.parser
import http.server
import os
import re
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks"))
from browser import CHROMIUM, CHROMIUM_ARGS, OUT, ROOT  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

BOOK = os.path.join(ROOT, "target", "book")
SRC = os.path.join(ROOT, "docs", "src")
# Words a reader looks up, and a page each must find.
SEARCHES = [("licm", "command-language.html"), ("leaderboard", "leaderboard.html"),
            ("time evaluator", "jit.html")]


class Page(html.parser.HTMLParser):
    """A page's links and element ids."""

    def __init__(self):
        super().__init__()
        self.links, self.ids, self.title = [], set(), ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


@functools.lru_cache(maxsize=None)
def parsed(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def chapters():
    """(title, page) of each chapter SUMMARY.md lists."""
    with open(os.path.join(SRC, "SUMMARY.md")) as f:
        return [(t, re.sub(r"\.md$", ".html", p)) for t, p in re.findall(r"\[([^\]]+)\]\(([^)]+\.md)\)", f.read())]


def check_files():
    problems = []
    for title, page in chapters():
        path = os.path.join(BOOK, page)
        if not os.path.exists(path):
            problems.append(f"SUMMARY.md's '{title}' has no page ({page})")
        elif title not in parsed(path).title:
            problems.append(f"{page}: titled '{parsed(path).title.strip()}', not '{title}'")
    pages = [os.path.join(d, n) for d, _, ns in os.walk(BOOK) for n in ns
             if n.endswith(".html") and os.path.relpath(d, BOOK).split(os.sep)[0] != "lessons"]
    links = 0
    for page in sorted(pages):
        for href in parsed(page).links:
            url = urllib.parse.urlparse(href)
            if url.scheme or href.startswith("//"):
                continue
            links += 1
            target = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(url.path))) \
                if url.path else page
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            where = os.path.relpath(page, BOOK)
            if not os.path.exists(target):
                problems.append(f"{where}: a link to {href}, which is not in the book")
            elif url.fragment and target.endswith(".html") and \
                    urllib.parse.unquote(url.fragment) not in parsed(target).ids:
                problems.append(f"{where}: a link to {href}, whose #{url.fragment} is not on that page")
    return problems, len(pages), links


def serve():
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=BOOK))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check_browser():
    problems, found = [], []
    server = serve()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(base + "index.html")
            toc = page.locator("#mdbook-sidebar .chapter li a, #sidebar .chapter li a")
            toc.first.wait_for(timeout=30_000)
            shown = [t.strip() for t in toc.all_inner_texts()]
            for title, _ in chapters():
                if not any(title in s for s in shown):
                    problems.append(f"the chapter list does not show '{title}'")
            os.makedirs(OUT, exist_ok=True)
            page.screenshot(path=os.path.join(OUT, "book.png"))
            for words, want in SEARCHES:
                page.goto(base + "index.html")
                page.keyboard.press("s")
                box = page.locator("#mdbook-searchbar, #searchbar")
                box.first.wait_for(state="visible", timeout=10_000)
                box.first.fill("")
                box.first.type(words, delay=30)
                results = page.locator("#mdbook-searchresults li a, #searchresults li a")
                try:
                    results.first.wait_for(timeout=10_000)
                except Exception:
                    problems.append(f"searching '{words}' found nothing")
                    continue
                hrefs = [results.nth(i).get_attribute("href") or "" for i in range(results.count())]
                found.append(f"'{words}': {len(hrefs)} results")
                if not any(h.split("#")[0].split("?")[0].endswith(want) for h in hrefs):
                    problems.append(f"searching '{words}' did not find {want}: {hrefs[:5]}")
                if words == SEARCHES[0][0]:
                    page.screenshot(path=os.path.join(OUT, "book-search.png"))
            browser.close()
    finally:
        server.shutdown()
    return problems, found


def main():
    if not os.path.exists(os.path.join(BOOK, "index.html")):
        print("book: not built (bash scripts/passlab.sh book builds it)")
        return 1
    problems, pages, links = check_files()
    more, found = check_browser()
    problems += more
    print(f"book: {'ok' if not problems else 'FAILED'}: {len(chapters())} chapters, {pages} pages, "
          f"{links} links checked; search: {'; '.join(found)}; screenshots: target/browser/book.png, "
          "target/browser/book-search.png")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
