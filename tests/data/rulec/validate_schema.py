#!/usr/bin/python3
# Validate policy YAML files against docs/policy.schema.json (JSON Schema
# draft 2020-12) with python3-jsonschema. Without it, a small validator
# for the keywords that schema uses ($ref, type, const, enum, pattern,
# minLength, minimum, maximum, minItems, items, properties, required,
# additionalProperties, propertyNames, oneOf, anyOf, not) does the check and
# says so. Exit 0 all valid, 1 some invalid, 77 when python3-yaml is missing.
import json
import re
import sys

try:
    import yaml
except ImportError as e:
    print("skip: %s" % e)
    sys.exit(77)


def resolve(root, ref):
    node = root
    for part in ref.lstrip('#/').split('/'):
        node = node[part]
    return node
def tname(x):
    if isinstance(x, bool): return 'boolean'
    if isinstance(x, int): return 'integer'
    if isinstance(x, float): return 'number'
    if isinstance(x, str): return 'string'
    if isinstance(x, list): return 'array'
    if isinstance(x, dict): return 'object'
    if x is None: return 'null'
def errs(root, s, x, path):
    out = []
    if '$ref' in s:
        out += errs(root, resolve(root, s['$ref']), x, path)
    if 'type' in s and tname(x) != s['type'] and not (s['type'] == 'number' and tname(x) == 'integer'):
        return out + ['%s: %r is not %s' % (path, x, s['type'])]
    if 'const' in s and x != s['const']: out.append('%s: %r != %r' % (path, x, s['const']))
    if 'enum' in s and x not in s['enum']: out.append('%s: %r not in %r' % (path, x, s['enum']))
    if isinstance(x, str):
        if 'pattern' in s and not re.search(s['pattern'], x): out.append('%s: %r !~ %s' % (path, x, s['pattern']))
        if 'minLength' in s and len(x) < s['minLength']: out.append('%s: too short' % path)
    if isinstance(x, int) and not isinstance(x, bool):
        if 'minimum' in s and x < s['minimum']: out.append('%s: below minimum' % path)
        if 'maximum' in s and x > s['maximum']: out.append('%s: above maximum' % path)
    if isinstance(x, list):
        if 'minItems' in s and len(x) < s['minItems']: out.append('%s: too few items' % path)
        if 'items' in s:
            for i, v in enumerate(x): out += errs(root, s['items'], v, '%s/%d' % (path, i))
    if isinstance(x, dict):
        props = s.get('properties', {})
        for r in s.get('required', []):
            if r not in x: out.append('%s: missing %s' % (path, r))
        for k, v in x.items():
            if 'propertyNames' in s: out += errs(root, s['propertyNames'], k, '%s/%s(key)' % (path, k))
            if k in props: out += errs(root, props[k], v, '%s/%s' % (path, k))
            elif s.get('additionalProperties') is False: out.append('%s: unexpected key %s' % (path, k))
            elif isinstance(s.get('additionalProperties'), dict): out += errs(root, s['additionalProperties'], v, '%s/%s' % (path, k))
    if 'oneOf' in s:
        ok = [sub for sub in s['oneOf'] if not errs(root, sub, x, path)]
        if len(ok) != 1: out.append('%s: %r matches %d of oneOf' % (path, x, len(ok)))
    if 'anyOf' in s and not any(not errs(root, sub, x, path) for sub in s['anyOf']):
        out.append('%s: %r matches none of anyOf' % (path, x))
    if 'not' in s and not errs(root, s['not'], x, path): out.append('%s: matches not' % path)
    return out

def main():
    schema = json.load(open(sys.argv[1]))
    docs = [(p, yaml.safe_load(open(p))) for p in sys.argv[2:]]
    bad = 0
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema:
        jsonschema.Draft202012Validator.check_schema(schema)
        v = jsonschema.Draft202012Validator(schema)
        for p, d in docs:
            for e in v.iter_errors(d):
                print("%s: %s: %s" % (p, "/".join(map(str, e.path)), e.message))
                bad += 1
        from importlib.metadata import version
        how = "jsonschema %s" % version("jsonschema")
    else:
        for p, d in docs:
            for e in errs(schema, schema, d, p):
                print(e)
                bad += 1
        how = "the built-in subset validator (python3-jsonschema is not installed)"
    print("%d files checked with %s, %d problems" % (len(docs), how, bad))
    sys.exit(1 if bad else 0)


main()
