import assert from "node:assert/strict";
import type { z } from "zod";
import { InputError } from "./errors.ts";
import { CommonFileSchema, InstanceFileSchema } from "./schema.ts";
import { YamlSource } from "./source.ts";
import { closest, validate } from "./validate.ts";

const fail = (text: string, schema: z.ZodType = CommonFileSchema) => {
  try {
    validate(new YamlSource("c.yaml", text), schema);
  } catch (e) {
    assert.ok(e instanceof InputError);
    return e.message;
  }
  assert.fail("expected an InputError");
};

Deno.test("validate() fills upstream defaults", () => {
  const c = validate(new YamlSource("c.yaml", "model_config:\n  name: Qwen/Qwen3-32B\n"), CommonFileSchema);
  assert.equal(c.model_config.quantize_linear_action, "W8A8_DYNAMIC");
  assert.equal(c.load_gen.num_requests, 500);
  assert.equal(c.serving_config.block_size, 128);
  assert.equal(c.serving_config.max_tokens_budget, 8192);
});

Deno.test("validate() reads .inf as an infinite request rate", () => {
  const c = validate(
    new YamlSource("c.yaml", "model_config: {name: x}\nload_gen: {request_rate: .inf}\n"),
    CommonFileSchema,
  );
  assert.equal(c.load_gen.load_gen_type, "fixed_length");
  if (c.load_gen.load_gen_type === "fixed_length") assert.equal(c.load_gen.request_rate, Infinity);
});

Deno.test("validate() names the first problem in file order with its position", () => {
  const msg = fail("model_config:\n  name: x\nserving_config:\n  block_size: 0\n  max_num_seqs: -2\n");
  assert.equal(msg, "c.yaml:4:15: serving_config.block_size: expected a positive integer, got 0");
});

Deno.test("validate() suggests the closest key for a misspelling", () => {
  assert.equal(
    fail("model_config:\n  name: x\n  quantize_linear_actoin: FP8\n"),
    "c.yaml:3:3: model_config.quantize_linear_actoin: unknown key 'quantize_linear_actoin'; did you mean 'quantize_linear_action'?",
  );
});

Deno.test("validate() reports a missing required key at its parent", () => {
  assert.equal(
    fail("instance_groups:\n  - num_instances: 1\n    pd_role: both\n", InstanceFileSchema),
    "c.yaml:2:5: instance_groups[0].num_devices_per_instance: missing required key 'num_devices_per_instance'",
  );
});

Deno.test("validate() rejects YAML duplicate keys as syntax errors", () => {
  assert.throws(
    () => new YamlSource("c.yaml", "a: 1\na: 2\n"),
    /c\.yaml:2:1: YAML syntax error: Map keys must be unique/,
  );
});

Deno.test("closest() finds near misses only", () => {
  assert.equal(closest("H100_SXM_80GB", ["H100_SXM_80G", "A100_SXM_80G"]), "H100_SXM_80G");
  assert.equal(closest("banana", ["H100_SXM_80G"]), undefined);
});
