"""Schemathesis hooks for the API contract run (scripts/api-contract.sh).

OpenAPI cannot tie a query parameter to a path parameter, so two rules the document states in
words are applied here to the cases schemathesis generates as valid: `quality` is a 400 on a PNG
path, and `format=` must name the path's own format (`jpg` and `jpeg` agree). Generated valid
cases that break them are left out; invalid ones are all sent, and must be refused.
"""

import schemathesis

JPEG = {"jpg", "jpeg"}


def same_format(a, b):
    return a == b or (a in JPEG and b in JPEG)


@schemathesis.hook
def filter_case(context, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    path_format = (case.path_parameters or {}).get("format")
    query = case.query or {}
    if not isinstance(query, dict) or path_format is None:
        return True
    if path_format == "png" and "quality" in query:
        return False
    if "format" in query and not same_format(str(query["format"]), path_format):
        return False
    return True
