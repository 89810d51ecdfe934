#!/usr/bin/env python3
"""Checks JSON documents against a JSON Schema (draft 2020-12), the part of
it that docs/schemas/ uses: type, const, enum, minimum, maximum,
exclusiveMinimum, exclusiveMaximum, properties, required,
additionalProperties, items and $ref (to "#/$defs/..." of the same schema or
"other.schema.json#/$defs/..." beside it). A keyword outside that set is an
error, not skipped, so a schema never claims more than is checked.
Standard library only (Debian's python3 or any other).

    check_json_schema.py SCHEMA DOCUMENT...

Prints one line per problem (document, JSON pointer, what was expected and
found) and exits 1 when there is any; prints "ok: DOCUMENT" otherwise.
"""

import json
import os
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}
CHECKED = {"type", "const", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
           "properties", "required", "additionalProperties", "items", "$ref"}


class Schemas:
    """Schema files by path, loaded once."""

    def __init__(self):
        self.files = {}

    def load(self, path):
        path = os.path.abspath(path)
        if path not in self.files:
            with open(path, encoding="utf-8") as f:
                self.files[path] = json.load(f)
        return path, self.files[path]

    def resolve(self, ref, base_path):
        target, _, pointer = ref.partition("#")
        path = base_path if not target else os.path.join(os.path.dirname(base_path), target)
        path, node = self.load(path)
        for part in [p for p in pointer.split("/") if p]:
            node = node[part]
        return path, node


def type_matches(value, name):
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "number":
        return isinstance(value, (int, float))
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise ValueError(f"unknown type '{name}'")


def check(value, schema, where, schemas, path, problems):
    unknown = set(schema) - ANNOTATIONS - CHECKED
    if unknown:
        raise ValueError(f"{path}: keywords not checked by this validator: {sorted(unknown)}")

    def problem(expected):
        problems.append(f"{where or '/'}: expected {expected}, found {json.dumps(value)[:80]}")

    if "$ref" in schema:
        ref_path, target = schemas.resolve(schema["$ref"], path)
        check(value, target, where, schemas, ref_path, problems)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(type_matches(value, n) for n in names):
            problem(" or ".join(names))
            return
    if "const" in schema and value != schema["const"]:
        problem(json.dumps(schema["const"]))
    if "enum" in schema and value not in schema["enum"]:
        problem("one of " + ", ".join(json.dumps(e) for e in schema["enum"]))
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if numeric:
        if "minimum" in schema and value < schema["minimum"]:
            problem(f">= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problem(f"<= {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            problem(f"> {schema['exclusiveMinimum']}")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            problem(f"< {schema['exclusiveMaximum']}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where or '/'}: expected key '{key}', found none")
        for key, item in value.items():
            at = f"{where}/{key}"
            if key in properties:
                check(item, properties[key], at, schemas, path, problems)
            elif "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                if extra is False:
                    problems.append(f"{at}: expected no such key (not in the schema), found one")
                elif isinstance(extra, dict):
                    check(item, extra, at, schemas, path, problems)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check(item, schema["items"], f"{where}/{i}", schemas, path, problems)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        print("usage: check_json_schema.py SCHEMA DOCUMENT...", file=sys.stderr)
        return 2
    schemas = Schemas()
    schema_path, schema = schemas.load(argv[1])
    failed = False
    for document in argv[2:]:
        with open(document, encoding="utf-8") as f:
            value = json.load(f)
        problems = []
        check(value, schema, "", schemas, schema_path, problems)
        for p in problems:
            print(f"{document}: {p}")
        if problems:
            failed = True
        else:
            print(f"ok: {document}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
