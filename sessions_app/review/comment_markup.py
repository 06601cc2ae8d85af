"""A comment's markdown as inert HTML, and the @mentions it names. Pure.

markdown-it-py in its CommonMark preset with raw HTML off: `<script>` and every other tag in the text come out
escaped, and links are kept only when markdown-it's own validator accepts their scheme (no `javascript:`,
`vbscript:`, `file:` or non-image `data:`). Links open nothing on their own: rel="nofollow noopener".
"""

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

MAX_COMMENT_LENGTH = 10_000
_MENTION = re.compile(r"(?<![\w@])@([\w.+-]{1,150})")

_RENDERER = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).disable("image")


def _link_rel(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
    return renderer.renderToken(tokens, idx, options, env)


_RENDERER.add_render_rule("link_open", _link_rel)


def render_comment(text: str) -> str:
    """Escaped HTML of `text` rendered as markdown (no raw HTML, no images)."""
    html: str = _RENDERER.render(text)
    return html


def mentioned_usernames(text: str) -> list[str]:
    """The distinct `@username`s in `text`, in order of first mention (who they are is the service's to check)."""
    seen: dict[str, None] = {}
    for name in _MENTION.findall(text):
        seen.setdefault(name.rstrip("."), None)
    return list(seen)
