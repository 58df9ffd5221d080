// rjsf's validator, backed by @cfworker/json-schema instead of Ajv: Ajv compiles schemas with
// `new Function`, which the inbox's Content-Security-Policy (no 'unsafe-eval') forbids, while
// @cfworker/json-schema interprets the schema. Draft-07 by default, like the server
// (layers/baton/python/baton/domain/answer_schema.py); `$schema` picks draft-04 (draft-06 is checked as
// draft-07, which only adds to it).
import { Validator } from "@cfworker/json-schema";
import { toErrorSchema } from "@rjsf/utils";

const DRAFTS = { "http://json-schema.org/draft-04/schema#": "4", "http://json-schema.org/draft-06/schema#": "7" };
// Keywords that only say "something below failed": the error below says what.
const WRAPPERS = new Set(["properties", "items", "$ref", "allOf", "additionalItems", "dependencies", "if", "then", "else"]);

function draftOf(schema) {
  return DRAFTS[(schema && schema.$schema) || ""] || "7";
}

// JSON as the server sees it: undefined members dropped, an absent value is null.
function asJson(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

// "#/items/1/n" -> ".items.1.n" (rjsf's property path); a missing required property points at itself.
function propertyOf(unit) {
  const pointer = unit.instanceLocation.replace(/^#/, "");
  let property = pointer
    .split("/")
    .filter(Boolean)
    .map((part) => "." + part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join("");
  if (unit.keyword === "required") {
    const missing = /property "([^"]+)"/.exec(unit.error);
    if (missing) property += "." + missing[1];
  }
  return property;
}

function messageOf(unit) {
  if (unit.keyword === "required") return "is a required property";
  return unit.error.replace(/^Instance /, "").replace(/\.$/, "");
}

export function validationErrors(schema, formData) {
  const result = new Validator(schema, draftOf(schema), false).validate(asJson(formData));
  if (result.valid) return [];
  const leaves = result.errors.filter((unit) => !WRAPPERS.has(unit.keyword));
  return (leaves.length ? leaves : result.errors).map((unit) => {
    const property = propertyOf(unit);
    const message = messageOf(unit);
    return { name: unit.keyword, property, message, params: {}, stack: `${property || "value"} ${message}`, schemaPath: unit.keywordLocation };
  });
}

class CspSafeValidator {
  validateFormData(formData, schema, customValidate, transformErrors) {
    let errors = validationErrors(schema, formData);
    if (typeof transformErrors === "function") errors = transformErrors(errors);
    return { errors, errorSchema: toErrorSchema(errors) };
  }

  rawValidation(schema, formData) {
    try {
      return { errors: validationErrors(schema, formData) };
    } catch (validationError) {
      return { validationError };
    }
  }

  // Used to pick the matching anyOf/oneOf branch: the branch's $refs resolve against the root's definitions.
  isValid(schema, formData, rootSchema) {
    const withDefinitions = { ...schema, definitions: rootSchema && rootSchema.definitions, $defs: rootSchema && rootSchema.$defs };
    try {
      return new Validator(withDefinitions, draftOf(rootSchema), true).validate(asJson(formData)).valid;
    } catch {
      return false;
    }
  }

  reset() {}
}

export const validator = new CspSafeValidator();
