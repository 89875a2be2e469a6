/**
 * The pieces the configuration sections build their schemas from (TypeBox: a JSON Schema and its TypeScript
 * type in one declaration). Each section's schema sits beside the code that reads it (`src/sessions/config.ts`
 * beside the sessions, ...); `gateway-schema.ts` assembles them into the schema of config/gateway.yaml.
 *
 * Every object is strict (`additionalProperties: false`): an unknown key in the file is refused, naming it.
 */
import { Type, type Static, type TSchema, type TProperties, type ObjectOptions } from '@sinclair/typebox';

/** A strict object: unknown keys refused. */
export const Strict = <T extends TProperties>(properties: T, options: ObjectOptions = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

/** A duration in milliseconds: a whole number, at least 1. */
export const Ms = (options: { description?: string } = {}) => Type.Integer({ minimum: 1, ...options });

/** The name of an environment variable (the value itself never goes in YAML). */
export const EnvName = (description?: string) => Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$', ...(description ? { description } : {}) });

/**
 * Exactly one of several shapes (JSON Schema `oneOf`; TypeBox's Union writes `anyOf`, which would also let a
 * value match two branches and words its errors differently). Its type is the union of the branches.
 */
export const OneOf = <T extends TSchema[]>(schemas: [...T], options: { description?: string } = {}) =>
  Type.Unsafe<Static<T[number]>>({ oneOf: schemas, ...options });

/**
 * A map from names to values of one shape (`additionalProperties: <value>`, and `propertyNames` when the names
 * have a pattern). TypeBox's Record writes `patternProperties` instead, which would let a name outside the
 * pattern through unchecked.
 */
export const MapOf = <V extends TSchema>(value: V, options: { namePattern?: string; description?: string } = {}) => {
  const { namePattern, ...rest } = options;
  return Type.Unsafe<Record<string, Static<V>>>({
    type: 'object',
    ...(namePattern ? { propertyNames: { pattern: namePattern } } : {}),
    additionalProperties: value,
    ...rest,
  });
};

/** One allowed value (`const` alone, as JSON Schema writes it; TypeBox's Literal adds a `type` beside it). */
export const Const = <V extends string | number | boolean>(value: V, options: { description?: string } = {}) => Type.Unsafe<V>({ const: value, ...options });
