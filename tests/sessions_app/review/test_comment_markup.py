"""A comment's markdown comes out as inert HTML: no raw HTML, no script links, no images; mentions found. Pure."""

import re

from hypothesis import given
from hypothesis import strategies as st

from sessions_app.review.comment_markup import mentioned_usernames, render_comment


def test_a_script_tag_is_escaped_text():
    html = render_comment("Look <script>alert('x')</script> <img src=x onerror=alert(1)>")
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_markdown_renders_and_only_safe_links_stay_links():
    html = render_comment("**bold** [ok](https://example.com) [bad](javascript:alert(1)) ![i](https://x/y.png)")
    assert "<strong>bold</strong>" in html
    assert '<a href="https://example.com" rel="nofollow noopener noreferrer">ok</a>' in html
    assert 'href="javascript' not in html
    assert "<img" not in html


def test_mentions_are_distinct_names_and_not_email_addresses():
    assert mentioned_usernames("@ada, please ask @sam_2. cc @ada; mail sam@example.com") == ["ada", "sam_2"]


MARKDOWN_TAGS = {"p", "em", "strong", "code", "pre", "a", "ul", "ol", "li", "blockquote", "hr", "br"} | {
    f"h{n}" for n in range(1, 7)
}


@given(st.text(max_size=300))
def test_no_text_makes_a_tag_markdown_does_not_make(text):
    tags = {name.lower() for name in re.findall(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)", render_comment(text))}
    assert tags <= MARKDOWN_TAGS
