"""A small reader of ``tests/vectors/a2a/a2a.proto``: the messages an Agent Card is made of.

Enough of proto3 for the A2A file (messages, ``optional``, ``repeated``, ``map<,>``,
``oneof`` blocks, ``[(google.api.field_behavior) = REQUIRED]``), so that
``tests/a2a/test_proto_fields.py`` can hold ``ajpcore.a2a``'s field table to the published file.
"""

import re
from pathlib import Path

PROTO = Path(__file__).resolve().parent / "vectors" / "a2a" / "a2a.proto"

_FIELD = re.compile(
    r"^(?P<label>optional |repeated )?(?P<type>map<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(?P<name>\w+)\s*=\s*\d+"
    r"(?P<options>\s*\[[^\]]*\])?\s*;"
)


def json_name(name):
    """protoc's lowerCamelCase JSON name of a field (``supported_interfaces`` -> ``supportedInterfaces``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def read_messages(path=PROTO):
    """``{message: {json_name: (kind, type)}}`` where kind is required / optional / implicit /
    repeated / map / message / oneof, and type the proto type (map: its value type)."""
    text = re.sub(r"//[^\n]*", "", path.read_text("utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    messages = {}
    stack = []  # ("message", name) or ("oneof", name) or ("other", name)
    pending = ""
    for line in lines:
        if pending:
            line = pending + " " + line
            pending = ""
        m = re.match(r"^(message|oneof|enum|service|rpc)\s+(\w+)", line)
        if m:
            kind = m.group(1) if m.group(1) in ("message", "oneof") else "other"
            if m.group(1) == "message":
                messages[m.group(2)] = {}
            if line.endswith("{"):
                stack.append((kind, m.group(2)))
            elif "{" in line and "}" not in line:
                stack.append((kind, m.group(2)))
            continue
        if line == "}" or line.startswith("}"):
            if stack:
                stack.pop()
            continue
        if line.endswith("{"):
            stack.append(("other", line))
            continue
        if not stack or stack[-1][0] not in ("message", "oneof"):
            continue
        if not line.endswith(";"):
            pending = line
            continue
        f = _FIELD.match(line)
        if not f:
            continue
        owner = next(name for kind, name in reversed(stack) if kind == "message")
        ftype = f.group("type")
        required = "REQUIRED" in (f.group("options") or "")
        if stack[-1][0] == "oneof":
            kind = "oneof"
        elif ftype.startswith("map<"):
            kind = "map"
            ftype = ftype.split(",")[1].strip(" >")
        elif f.group("label") == "repeated ":
            kind = "repeated"
        elif f.group("label") == "optional ":
            kind = "optional"
        elif ftype in ("string", "bool", "int32", "int64", "uint32", "uint64", "double", "float", "bytes"):
            kind = "implicit"
        else:
            kind = "message"
        if required:
            kind = "required:" + kind
        messages[owner][json_name(f.group("name"))] = (kind, ftype)
    return messages


def card_messages(path=PROTO):
    """The messages reachable from ``AgentCard``, with their fields."""
    messages = read_messages(path)
    seen, todo = {}, ["AgentCard"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen[name] = messages[name]
        for _kind, ftype in messages[name].values():
            if ftype in messages:
                todo.append(ftype)
    return dict(sorted(seen.items()))
