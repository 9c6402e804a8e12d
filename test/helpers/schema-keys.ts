import { z } from "zod";

/** The field names of a config-model schema, sorted: an object's keys, a union's keys all together. */
export function keysOf(t: z.ZodTypeAny): string[] {
  if (t instanceof z.ZodOptional || t instanceof z.ZodDefault)
    return keysOf(t._def.innerType as z.ZodTypeAny);
  if (t instanceof z.ZodEffects) return keysOf(t.innerType() as z.ZodTypeAny);
  if (t instanceof z.ZodObject) return Object.keys(t.shape as object).sort();
  if (t instanceof z.ZodDiscriminatedUnion)
    return [...new Set((t.options as z.ZodObject<z.ZodRawShape>[]).flatMap((o) => keysOf(o)))].sort();
  throw new Error(`no keys in ${t.constructor.name}`);
}
