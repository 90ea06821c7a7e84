"""Schemathesis hooks for the API contract run (scripts/api-contract.sh).

OpenAPI cannot tie a query parameter to a path parameter, so two rules the document states in
words are applied here to the cases schemathesis generates as valid: `quality` is a 400 for a PNG
(named by the path or by `format=`), and `format=` must name the path's own format (`jpg` and
`jpeg` agree). Generated valid cases that break them are left out; invalid ones are all sent, and
must be refused, except one kind that is not invalid on the wire: a query value that is null or
an empty list or object, or a list or object of such values, is sent as no parameter at all
(`picture: []` or `picture: [null]` becomes a URL without `picture`), so schemathesis would expect
a refusal of a request that is valid.
"""

import schemathesis

JPEG = {"jpg", "jpeg"}


def same_format(a, b):
    return a == b or (a in JPEG and b in JPEG)


def vanishes(value):
    """Whether form serialization sends nothing for a value: null, and a list or object whose
    items all vanish (`[]`, `{}`, `[null]`, `[[], {}]`, `{"a": null}`; an exploded list sends one
    parameter per item, an exploded object one per property)."""
    if value is None:
        return True
    if isinstance(value, list):
        return all(vanishes(item) for item in value)
    if isinstance(value, dict):
        return all(vanishes(item) for item in value.values())
    return False


def vanishes_on_the_wire(query):
    """Whether some parameter of a query is one that form serialization drops."""
    if not isinstance(query, dict):
        return False
    return any(vanishes(value) for value in query.values())


@schemathesis.hook
def filter_case(context, case):
    meta = case.meta
    if meta is None:
        return True
    if not meta.generation.mode.is_positive:
        return not vanishes_on_the_wire(case.query)
    path_format = (case.path_parameters or {}).get("format")
    query = case.query or {}
    if not isinstance(query, dict):
        return True
    # quality with a PNG, named by the path or by format= on an extensionless URL.
    if "quality" in query and (path_format or str(query.get("format", ""))) == "png":
        return False
    if path_format is None:
        return True
    if "format" in query and not same_format(str(query["format"]), path_format):
        return False
    return True
