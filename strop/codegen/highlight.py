"""Syntax highlighting of generated source for ``strop.show``: ANSI colors or HTML, from the
standard library's tokenizer (no dependency)."""
import html as _html
import io
import keyword
import tokenize

# token kind -> (ANSI code, CSS color)
_STYLE = {"comment": ("90", "#6a737d"), "keyword": ("1;34", "#d73a49"),
          "string": ("32", "#032f62"), "number": ("36", "#005cc5"), "def": ("1;35", "#6f42c1")}


def _kinds(text):
    """(start offset, end offset, kind) of each highlighted token."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out, after_def = [], False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = None
            if tok.type == tokenize.COMMENT:
                kind = "comment"
            elif tok.type == tokenize.STRING:
                kind = "string"
            elif tok.type == tokenize.NUMBER:
                kind = "number"
            elif tok.type == tokenize.NAME and keyword.iskeyword(tok.string):
                kind = "keyword"
            elif tok.type == tokenize.NAME and after_def:
                kind = "def"
            after_def = tok.type == tokenize.NAME and tok.string == "def"
            if kind:
                (r0, c0), (r1, c1) = tok.start, tok.end
                out.append((offsets[r0 - 1] + c0, offsets[r1 - 1] + c1, kind))
    except (tokenize.TokenError, IndentationError):
        pass
    return out


def _render(text, wrap, escape):
    pieces, pos = [], 0
    for start, end, kind in _kinds(text):
        pieces.append(escape(text[pos:start]))
        pieces.append(wrap(escape(text[start:end]), kind))
        pos = end
    pieces.append(escape(text[pos:]))
    return "".join(pieces)


def ansi(text):
    return _render(text, lambda s, k: f"\033[{_STYLE[k][0]}m{s}\033[0m", lambda s: s)


def html(text):
    body = _render(text, lambda s, k: f'<span style="color:{_STYLE[k][1]}">{s}</span>',
                   _html.escape)
    return f"<pre>{body}</pre>"
