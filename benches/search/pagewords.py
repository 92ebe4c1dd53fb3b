"""Words of a query and of a page, as the query sets' checkers count them.

A page's text is html.parser's text with script and style skipped; text is lowercased
and split on non-alphanumerics; a content word has at least 3 characters and is not an
English function word. check-concept.py, heldout/check.py and heldout/check-noshare.py
all count this way, so their figures compare.
"""
import re
from html.parser import HTMLParser

# English function words (articles, pronouns, auxiliaries, prepositions, conjunctions):
# sharing one of these with a page says nothing about its subject.
STOPWORDS = set("""a an the and or but nor so yet if then else than because as while until
of at by for with about against between into through during before after above below to from
up down in out on off over under again once here there when where why how all any both each
few more most other some such no not only own same too very can will just should now also
i me my we our you your he him his she her it its they them their what which who whom this that
these those am is are was were be been being have has had having do does did doing would could
might must shall may whose whether within without upon onto per via
itself myself yourself himself herself ourselves themselves""".split())

SPLIT = re.compile(r"[^0-9a-z]+")


def words(text):
    return [w for w in SPLIT.split(text.lower()) if w]


def content_words(text):
    return [w for w in words(text) if len(w) >= 3 and w not in STOPWORDS]


class _TextExtractor(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.parts = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def page_text(path):
    """The text of the HTML page at `path`."""
    p = _TextExtractor()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    p.close()
    return " ".join(p.parts)


def page_words(path):
    """The set of words of the HTML page at `path`."""
    return set(words(page_text(path)))
