#!/usr/bin/python3
# Validate policy YAML files against docs/policy.schema.json (JSON Schema
# draft 2020-12). Exit 0 all valid, 1 some invalid, 77 when python3-jsonschema
# or python3-yaml is not installed (the test then reports a skip).
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:
    print("skip: %s" % e)
    sys.exit(77)
import json

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    doc = yaml.safe_load(open(path))
    for err in validator.iter_errors(doc):
        print("%s: %s: %s" % (path, "/".join(map(str, err.path)), err.message))
        bad += 1
sys.exit(1 if bad else 0)
