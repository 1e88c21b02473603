"""Explain a YAML syntax error in terms of the mistake an author made, and name the fix.

libyaml reports what its state machine expected (``mapping values are not
allowed in this context``); a note's author needs to hear "the value holds
': ' — quote it". :func:`explain` recognises the common mistakes in
frontmatter and says where and how to fix each, quoting the author's text:

* an unquoted ``: `` inside a value (YAML 1.2 §7.3.3: a plain scalar cannot hold ``: ``),
* a missing space after a key's colon, a stray indentation,
* an unclosed quote, ``[`` or ``{``; text after a closing quote or bracket,
* a value starting with an indicator YAML reserves (``@``, backtick, ``%``, ``*``;
  §5.3) or a ``[[WikiLink]]`` written unquoted.

Anything else keeps libyaml's words, prefixed ``YAML error:``.
"""

from __future__ import annotations

import re
import unicodedata

import yaml

from vaultsync.diagnostics import advise, cut
from vaultsync.vault.wikilinks import link_texts
from vaultsync.vault.yamlquote import quote

_KEY = re.compile(r"^(?P<indent>[ ]*)(?:-[ ]+)?(?P<key>[^\s#'\"\[\]{}][^:#]*?|\"[^\"]*\"|'[^']*'):(?:[ \t]+|$)")
_RESERVED = {"@": "'@'", "`": "a backtick", "%": "'%'", "*": "'*'", "|": "'|'", ">": "'>'"}


def _value_of(line: str) -> tuple[str, str, int] | None:
    """(key, value text, value column) of a ``key: value`` line, or None."""
    m = _KEY.match(line)
    if not m:
        return None
    key = m.group("key").strip().strip("'\"")
    return key, line[m.end():].rstrip(), m.end()


LIST_FIELDS = frozenset({"supersedes", "related", "aliases", "tags", "projects"})  # lists in the built-in schema
_KEY_MAX = 1024  # the longest implicit key YAML 1.2 allows (section 7.4.2), which PyYAML enforces
_ANY_KEY = re.compile(r"(?:^[ \t]*(?:-[ \t]+)*|[{,][ \t]*)([^\s{},][^{},]*?):(?:\s|$)")  # a block or flow key


def _fix(key: str, value: str) -> str:
    return f"{key}: {quote(value)}"


_DOCUMENT_END = re.compile(r"\.\.\.(?:[ \t]|$)")  # YAML's document end marker, alone or before a comment


def explain(exc: yaml.MarkedYAMLError, lines: list[str], line: int, col: int) -> tuple[int, int, str]:
    """(line, col, message) for a YAML error at 0-based ``line``/``col`` of YAML ``lines``."""
    problem = str(exc.problem or "")
    context = str(exc.context or "")
    here = lines[line] if 0 <= line < len(lines) else ""
    ctx = exc.context_mark
    kv = _value_of(here)

    conflict = next((i for i, text in enumerate(lines) if _CONFLICT.match(text)), None)
    if conflict is not None:
        return conflict, 0, (f"a merge-conflict marker ('{lines[conflict][:7]}') is left in the frontmatter "
                             "— resolve the conflict and delete the marker lines")
    directive = next((i for i, text in enumerate(lines) if text.startswith("%")), None)
    if directive is not None:  # `%YAML 1.1`, `%TAG …`: a directive goes before a document, never inside one
        text, pair = lines[directive].rstrip(), _value_of(lines[directive])
        if pair:
            return directive, 0, (f"{pair[0]}: a key starting with '%' reads as a YAML directive — quote it: "
                                  f"{quote(pair[0])}: {pair[1]}")
        return directive, 0, f"'{text}' is a YAML directive, which frontmatter cannot hold — delete the line"
    end = next((i for i, text in enumerate(lines[:line + 1]) if _DOCUMENT_END.match(text)), None)
    if end is not None and any(t.strip() and not t.lstrip().startswith("#") for t in lines[end + 1:]):
        # `...` ends the document: YAML then wants `---` (a second document), not more keys
        return end, 0, ("'...' ends the YAML document, but the frontmatter goes on after it — delete the line "
                        "(the frontmatter ends at its closing '---')")
    long_key = next(((i, m) for i, text in enumerate(lines[:line + 1]) for m in _ANY_KEY.finditer(text)
                     if len(m.group(1)) > _KEY_MAX and (m.start() == 0 or text[:m.start()].count("{")
                                                         > text[:m.start()].count("}"))), None)
    if long_key is not None:  # YAML gives up a would-be key past 1024 characters, then errs elsewhere
        i, m = long_key
        key = m.group(1)
        quoted = len(key) > 1 and key[0] in "'\"" and key[-1] == key[0]
        size = f"{len(key) - 2} characters and its 2 quotes" if quoted else f"{len(key)} characters"
        return i, m.start(1), (f"a key of {size}: YAML reads no key longer than 1024 characters"
                               f"{', quotes included' if quoted else ''} — shorten it")
    hidden = _comment_hides_closer(lines, line, ctx)
    if hidden is not None:
        return hidden
    for at, text, anywhere in ((line, here[:col + 1], True), (ctx.line if ctx else line, _line(lines, ctx), False)):
        odd = _invisible(text, anywhere)
        if odd is not None:  # a BOM, zero-width or no-break space YAML reads as text where a blank or nothing was meant
            name = unicodedata.name(text[odd], "an invisible character").lower()
            what = "an invisible character" if unicodedata.category(text[odd]) == "Cf" else "a space YAML reads as text"
            return at, odd, (f"{what}, U+{ord(text[odd]):04X} ({name}), stands in this line where YAML needs a "
                             "plain space or nothing — delete it and type a space if one is needed")
    if "could not find expected ':'" in problem and ctx is not None and ctx.line < len(lines):
        text = lines[ctx.line].strip()
        if ":" in text:
            key, _, rest = text.partition(":")
            return ctx.line, lines[ctx.line].index(":"), (f"'{cut(text)}' is not a 'key: value' pair: "
                                                         f"{advise('put a space after the colon', f'{key}: {rest}', ' ({})')}")
        return ctx.line, 0, f"'{cut(text)}' is not a 'key: value' pair: write 'key: value' (or quote the text)"
    if "mapping values are not allowed" in problem:
        if kv and kv[2] <= col:
            key, value, _ = kv
            return line, col, (f"{key}: the value holds ': ' (colon and space), which YAML reads as another key "
                               f"— quote the value: {_fix(key, value)}")
        prev = _previous_content_line(lines, line)
        if prev is not None and _value_of(lines[prev]) is None and not lines[prev].lstrip().startswith("- "):
            text = lines[prev].strip()
            if ":" in text:
                return prev, lines[prev].index(":"), (f"'{cut(text)}' is not a 'key: value' pair: put a space "
                                                      "after the colon")
            return prev, 0, f"'{cut(text)}' is not a 'key: value' pair: write 'key: value' (or quote the text)"
        if kv and here.startswith(" ") and prev is not None:
            return line, len(here) - len(here.lstrip(" ")), (
                f"'{kv[0]}' is indented further than the key above it, so YAML reads it as part of that value "
                "— start every key in the same column")
    if "duplicate anchor" in context and ctx is not None:
        name = _ANCHOR.match(lines[line][col:]) if 0 <= line < len(lines) else None
        shown = f"&{name.group(1)}" if name else "this anchor"
        return line, col, (f"{shown} is defined again (first on line {{first}}): the YAML readers vaultsync and "
                           "PyYAML use refuse a repeated anchor — give the second one another name")
    if "quoted scalar" in context and ctx is not None:
        quote_char = _char(lines, ctx.line, ctx.column) or '"'
        if "hexdecimal number" in problem or "hexadecimal number" in problem:
            start = lines[line].rfind("\\", 0, col + 1) if 0 <= line < len(lines) else -1
            escape = _HEX_ESCAPE.match(lines[line], start) if start >= 0 else None
            return line, max(start, 0), (
                f"'{escape.group(0) if escape else chr(92) + 'x'}' is an incomplete escape inside double quotes "
                "(\\x takes 2 hex digits, "
                "\\u 4, \\U 8) — use single quotes for text with backslashes, or write '\\\\'")
        if "invalid Unicode character escape" in problem:  # \uD800–\uDFFF: half of a UTF-16 pair, no character
            start = lines[line].rfind("\\", 0, col + 1) if 0 <= line < len(lines) else -1
            escape = _HEX_ESCAPE.match(lines[line], start) if start >= 0 else None
            return line, max(start, 0), (
                f"'{escape.group(0) if escape else chr(92) + 'u'}' names no character (a UTF-16 surrogate, or past "
                "U+10FFFF) — write the character itself, or one \\U escape of 8 hex digits for it")
        if "unknown escape" in problem:
            if _char(lines, line, col) != "\\" and col:
                col -= 1
            bad = _char(lines, line, col + 1)
            return line, col, (
                f"'\\{bad}' is not an escape inside double quotes — use single quotes for text with "
                "backslashes ('C:\\path'), or write '\\\\'")
        kind = "double" if quote_char == '"' else "single"
        return ctx.line, ctx.column, (f"the {kind} quote opened here is never closed — add the closing "
                                      f"{quote_char} on the same line")
    if ("flow sequence" in context or "flow mapping" in context) and ctx is not None:
        opener = "[" if "sequence" in context else "{"
        closer = "]" if opener == "[" else "}"
        return ctx.line, ctx.column, (f"the '{opener}' opened here is never closed — add '{closer}', or quote the "
                                      "value if the bracket is text")
    if "flow node" in context and "node content" in problem:  # `[a, , b]`, `[a, }`, or `[a,` on the last line
        opened = _open_bracket(lines, line, col)
        if _char(lines, line, col) == ",":
            return line, col, ("an empty item in a flow list or mapping — delete the extra ',' or write a value "
                               "before it")
        if _char(lines, line, col) in ("]", "}") and opened is not None:  # `[a, }`: the wrong closer
            return opened[0], opened[1], (f"the '{opened[2]}' opened here is closed with '{_char(lines, line, col)}' "
                                          f"— write '{']' if opened[2] == '[' else '}'}'")
        if opened is not None:
            at, start, opener = opened
            return at, start, (f"the '{opener}' opened here is never closed — add '{']' if opener == '[' else '}'}', "
                               "or quote the value if the bracket is text")
    if "cannot start any token" in problem:
        ch = _char(lines, line, col)
        if ch == "\t":
            return line, col, "tab character in frontmatter: YAML needs spaces here — replace the tab with spaces"
        what = _RESERVED.get(ch, f"'{ch}'")
        if kv:
            return line, col, f"{kv[0]}: a value cannot start with {what} (reserved in YAML) — quote it: " \
                              f"{_fix(kv[0], kv[1])}"
        return line, col, f"a value cannot start with {what} (reserved in YAML) — quote it"
    starters = {"block sequence entries are not allowed": "'- ' starts a list item",
                "mapping keys are not allowed": "'? ' starts a complex key",
                "did not find expected comment or line break": "'|' and '>' start a block of text on the next lines"}
    for words, why in starters.items():
        if words in problem and kv and kv[1][:1] in "-?|>":
            return line, kv[2], f"{kv[0]}: {why}, so a value cannot start with it — quote it: {_fix(kv[0], kv[1])}"
    if "expected alphabetic or numeric character" in problem and ("anchor" in context or "alias" in context):
        sign = "&" if "anchor" in context else "*"
        if kv:
            return line, kv[2], (f"{kv[0]}: a value starting with '{sign}' names a YAML {'anchor' if sign == '&' else 'alias'} "
                                 f"— quote it: {_fix(kv[0], kv[1])}")
    if "undefined alias" in problem:
        if kv:
            return line, col, f"{kv[0]}: a value starting with '*' names a YAML alias — quote it: {_fix(kv[0], kv[1])}"
        return line, col, "a value starting with '*' names a YAML alias — quote it"
    if "did not find expected key" in problem or "expected <block end>" in problem:
        if kv:
            key, value, start = kv
            if value.startswith("[["):
                links = link_texts(value)
                if len(links) > 1:  # `related: [[A]], [[B]]`: a list was meant, most likely
                    # (one text is no way out for a field the built-in schema reads as a list)
                    text = "" if key.strip().casefold() in LIST_FIELDS else \
                        f" (or the whole value as one text: {_fix(key, value)})"
                    return line, start, (f"{key}: an unquoted [[WikiLink]] is read as a YAML list — quote each link: "
                                         f"{key}: [{', '.join(map(quote, links))}]{text}")
                return line, start, (f"{key}: an unquoted [[WikiLink]] is read as a YAML list — quote the whole "
                                     f"value: {_fix(key, value)}")
            opened = _unclosed_quote_above(lines, line)
            if opened is not None:
                at, q, text = opened
                kind = "double" if q == '"' else "single"
                return at, lines[at].index(q), (f"the {kind} quote opened here is not closed on its line, so YAML "
                                                f"reads the lines below into it, up to the next {q} — close it: "
                                                f"{text.strip()}{q}")
            if value[:1] in ("'", '"', "[", "{"):
                closer = {"[": "]", "{": "}"}.get(value[0], value[0])
                hint = " (inside single quotes write '' for ')" if value[0] == "'" else ""
                return line, col, (f"{key}: text after the closing {closer} — quote the whole value{hint}: "
                                   f"{_fix(key, _unquoted(value))}")
        prev = _previous_content_line(lines, line)
        if prev is not None and lines[prev].rstrip().endswith(("|", ">", "|-", ">-", "|+", ">+")):
            return line, col, "this line is indented less than the first line of the '|' or '>' block above"
        return line, col, "expected a 'key: value' line here (check the indentation of this line)"
    if "expected <document start>" in problem:
        first = next((i for i, text in enumerate(lines) if text.strip() and not text.lstrip().startswith("#")), 0)
        if lines[first].startswith(" "):
            return first, 0, "the first key is indented: frontmatter keys start in column 1"
    if "expected '-' indicator" in problem:
        return line, col, "a list item ('- ...') was expected here: a block of list items cannot continue with a key"
    return line, col, f"YAML error: {problem or exc}"


_CONFLICT = re.compile(r"^(?:<{7}|={7}|>{7})(?: |$)")
_ANCHOR = re.compile(r"&([^\s,\[\]{}]+)")
_HEX_ESCAPE = re.compile(r"\\[xuU][0-9A-Fa-f]*")


def _comment_hides_closer(lines: list[str], line: int, ctx: yaml.Mark | None) -> tuple[int, int, str] | None:
    """A ' #' inside an open '[' or '{' starts a comment that hides the rest of the line, the closer too."""
    for at in dict.fromkeys(i for i in (ctx.line if ctx is not None else None, line, line - 1)
                            if i is not None and 0 <= i < len(lines)):
        text = lines[at]
        opener = min((i for i in (text.find("["), text.find("{")) if i >= 0), default=-1)
        hash_at = text.find(" #", opener) if opener >= 0 else -1
        if hash_at < 0 or _outside_quotes(text, opener) is False:
            continue
        closer = "]" if text[opener] == "[" else "}"
        start = max(text.rfind(",", opener, hash_at), opener) + 1
        end = min((i for i in (text.find(",", hash_at), text.find(closer, hash_at)) if i >= 0), default=len(text))
        item = text[start:end].strip()
        key, sep, value = item.partition(": ") if closer == "}" else ("", "", item)
        fix = f"{key}: {quote(value)}" if sep else quote(item)
        return at, hash_at + 1, (f"the ' #' in '{item}' starts a comment, which hides the rest of the line (the "
                                 f"closing '{closer}' too) — quote the {'value' if sep else 'item'}: {fix}")
    return None


def _open_bracket(lines: list[str], line: int, col: int) -> tuple[int, int, str] | None:
    """``(line, col, bracket)`` of the last ``[`` or ``{`` still open before ``line``/``col`` (quoted text and
    comments skipped), or None."""
    stack: list[tuple[int, int, str]] = []
    for i, text in enumerate(lines[:line + 1]):
        quote_char, skip = "", False
        for j, ch in enumerate(text[:col] if i == line else text):
            if skip:  # the second character of `\"` or `''`
                skip = False
            elif quote_char:
                skip = (ch == "\\" and quote_char == '"') or (ch == quote_char == "'" and text[j + 1:j + 2] == "'")
                quote_char = "" if ch == quote_char and not skip else quote_char
            elif ch in "'\"" and (j == 0 or text[j - 1] in " [{,:"):
                quote_char = ch
            elif ch == "#" and (j == 0 or text[j - 1] in " \t"):
                break
            elif ch in "[{":
                stack.append((i, j, ch))
            elif ch in "]}" and stack:
                stack.pop()
    return stack[-1] if stack else None


def _outside_quotes(text: str, at: int) -> bool:
    return text.count('"', 0, at) % 2 == 0 and text.count("'", 0, at) % 2 == 0


def _unclosed_quote_above(lines: list[str], line: int) -> tuple[int, str, str] | None:
    """(line, quote, text up to the line's end) of the content line above ``line`` whose value opens a
    quote it does not close: YAML then reads the value on to the next quote."""
    for prev in range(line - 1, -1, -1):  # up over the lines the open quote swallowed (they hold no quote)
        text = lines[prev]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        kv = _value_of(text)
        value = kv[1] if kv else text.strip().removeprefix("- ")
        q = value[:1]
        if q in ("'", '"') and value.count(q) == 1:
            return prev, q, text.rstrip()
        if '"' in text or "'" in text:
            return None
    return None


def _char(lines: list[str], line: int, col: int) -> str:
    return lines[line][col:col + 1] if 0 <= line < len(lines) else ""


def _invisible(text: str, anywhere: bool = True) -> int | None:
    """Where ``text`` holds, outside quotes, a space other than U+0020 (no-break, ideographic) or a format
    character (BOM, zero-width); not ``anywhere``: only first on the line or after a colon, where YAML needs
    a blank (a no-break space inside a value, as French typography writes ``10\u00a0€``, is text)."""
    return next((i for i, ch in enumerate(text) if ch != " " and unicodedata.category(ch) in ("Zs", "Cf")
                 and (anywhere or not text[:i].strip() or text[i - 1] == ":")
                 and text[:i].count('"') % 2 == 0 and text[:i].count("'") % 2 == 0), None)


def _line(lines: list[str], mark: yaml.Mark | None) -> str:
    """The line a YAML mark points at ("" for none)."""
    return lines[mark.line] if mark is not None and mark.line < len(lines) else ""


def _previous_content_line(lines: list[str], line: int) -> int | None:
    for i in range(line - 1, -1, -1):
        text = lines[i].strip()
        if text and not text.startswith("#"):
            return i
    return None


def _unquoted(value: str) -> str:
    """A value that starts with a quote, with a leading pair of matching quotes dropped (``'it's'`` → ``it's``)."""
    if len(value) >= 2 and value[0] in "'\"" and value.endswith(value[0]):
        return value[1:-1]
    return value
