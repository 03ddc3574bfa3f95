/**
 * Hardening of the config and scenario side (issue 11): every bad input is
 * one located line (`file:line:col: key.path: message`, exit 2), found
 * quickly, quoting little of what the user wrote.
 */
import assert from "node:assert/strict";
import { InputError } from "../core/config/errors.ts";
import { loadConfig, readYaml } from "../core/config/load.ts";
import { DEVICE_CATALOG } from "../core/hardware/devices.ts";
import { compareBaseline, loadScenario, parseBound, runScenario } from "../core/scenario/mod.ts";
import { fileIn } from "../core/scenario/scenario.ts";
import { COMMON_OK, INSTANCE_OK, memoryFs } from "./_helpers.ts";

/** Asserts that `f` throws an {@link InputError} printing exactly `message`. */
function throwsInput(f: () => unknown, message: string): void {
  assert.throws(f, (e) => {
    if (!(e instanceof InputError)) throw e;
    assert.equal(e.message, message);
    return true;
  });
}

const SCENARIO_HEAD = "instance_config: i.yaml\ncommon_config: c.yaml\n";

Deno.test("finding 1: an override index past the end of a list is an error at the override, found at once", () => {
  const fs = memoryFs({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml":
      `${SCENARIO_HEAD}overrides:\n  instance_groups[999999].num_instances: 2\nexpect:\n  total_requests: "== 50"\n`,
  });
  throwsInput(
    () => runScenario(loadScenario("s.yaml", fs), fs),
    "s.yaml:4:42: instance_groups[999999].num_instances: index 999999 is past the end of instance_groups (1 item: [0], or [1] to append)",
  );
});

Deno.test("finding 1: an override at the next index appends to the list", () => {
  const fs = memoryFs({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml":
      `${SCENARIO_HEAD}overrides:\n  instance_groups[1]: {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n  load_gen.num_requests: 10\nexpect:\n  total_requests: "== 10"\n`,
  });
  const r = runScenario(loadScenario("s.yaml", fs), fs);
  assert.equal(r.output.assembled.input.engines.length, 2);
});

Deno.test("finding 3: a scenario name that is not a plain file name is an error at name:", () => {
  const scenario = (name: string) =>
    memoryFs({ "s.yaml": `name: ${name}\n${SCENARIO_HEAD}expect:\n  total_requests: "== 50"\n` });
  const why = "expected a name of letters, digits, '.', '_' and '-', not starting with '.', at most 100 characters";
  throwsInput(() => loadScenario("s.yaml", scenario("../../../x")), `s.yaml:1:7: name: ${why}, got "../../../x"`);
  throwsInput(() => loadScenario("s.yaml", scenario("a/b")), `s.yaml:1:7: name: ${why}, got "a/b"`);
  throwsInput(() => loadScenario("s.yaml", scenario(".hidden")), `s.yaml:1:7: name: ${why}, got ".hidden"`);
  throwsInput(
    () => loadScenario("s.yaml", scenario("x".repeat(101))),
    `s.yaml:1:7: name: ${why}, got "${"x".repeat(80)}"… (101 characters)`,
  );
  assert.equal(loadScenario("s.yaml", scenario("llama-8b_v1.2")).name, "llama-8b_v1.2");
});

Deno.test("finding 3: the scenario output paths never leave their folder", () => {
  assert.equal(fileIn("out", "a.json"), "out/a.json");
  assert.equal(fileIn("out/", "a.seed2.json"), "out/a.seed2.json");
  for (const bad of ["../x.json", "a/b.json", "/etc/x.json", "..", ""]) {
    assert.throws(() => fileIn("out", bad), new RegExp(`^Error: refusing to write '${bad.replace(".", "\\.")}'`));
  }
});

Deno.test("finding 4: device and model names that are built-in object properties are unknown names", () => {
  const known = `(known: ${Object.keys(DEVICE_CATALOG).join(", ")}; or a path to a device file)`;
  for (const name of ["constructor", "toString", "valueOf", "__proto__"]) {
    const fs = memoryFs({ "i.yaml": INSTANCE_OK.replace("H100_SXM_80G", name), "c.yaml": COMMON_OK });
    throwsInput(
      () => loadConfig(["i.yaml"], "c.yaml", fs),
      `i.yaml:4:18: instance_groups[0].device_type: unknown device '${name}' ${known}`,
    );
    const fs2 = memoryFs({ "i.yaml": INSTANCE_OK, "c.yaml": COMMON_OK.replace(/name: .*/, `name: ${name}`) });
    throwsInput(
      () => loadConfig(["i.yaml"], "c.yaml", fs2),
      `c.yaml:2:9: model_config.name: unknown model '${name}' (not in the catalog; give a path to a config.json for others)`,
    );
  }
});

Deno.test("finding 4: a baseline file with a key named like a built-in property is compared as a plain metric", () => {
  const fs = memoryFs({ "s.yaml": `${SCENARIO_HEAD}baseline: true\n` });
  const s = loadScenario("s.yaml", fs);
  assert.ok(s.baseline);
  const r = compareBaseline(s, s.baseline, { constructor: 1, toString: 2 }, { "total_requests": 50 });
  assert.equal(r.pass, false);
  assert.equal(
    r.message,
    [
      "s.yaml:3:1: baseline: 3 of 3 metrics moved beyond their tolerance (__baselines__/s.json; if intended, run `deno task baseline s.yaml`)",
      "  metric          baseline  now  change  tolerance",
      "  constructor            1    —       —      ±5.0%",
      "  toString               2    —       —      ±5.0%",
      "  total_requests         —   50       —      ±5.0%",
    ].join("\n"),
  );
});

Deno.test("finding 8: YAML alias errors are located syntax errors", () => {
  throwsInput(
    () => readYaml("f.yaml", memoryFs({ "f.yaml": "a: 1\nb: *nope\n" })),
    "f.yaml:2:4: YAML alias error: unresolved alias '*nope' (the anchor must be set before the alias)",
  );
  const many = `a: &a [1]\nb: &b [${Array(10).fill("*a").join(", ")}]\nc: [${Array(20).fill("*b").join(", ")}]\n`;
  throwsInput(
    () => readYaml("f.yaml", memoryFs({ "f.yaml": many })),
    "f.yaml:3:5: YAML alias error: too many alias expansions (at most 100)",
  );
});

Deno.test("finding 9: the numeric fields of a model's config.json are validated", () => {
  const cfg = (extra: string) =>
    memoryFs({
      "i.yaml": INSTANCE_OK,
      "c.yaml": COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "./m/config.json"),
      "m/config.json": `{
  "model_type": "llama",
  "hidden_size": 4096,
  "num_hidden_layers": 32,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "intermediate_size": 14336,
  "vocab_size": 128256,
${extra}
}`,
    });
  throwsInput(
    () => loadConfig(["i.yaml"], "c.yaml", cfg(`  "max_position_embeddings": [[131072]]`)),
    "m/config.json:9:30: max_position_embeddings: expected a positive integer, got a list",
  );
  throwsInput(
    () =>
      loadConfig(
        ["i.yaml"],
        "c.yaml",
        cfg(`  "max_position_embeddings": 4096, "n_routed_experts": 8, "first_k_dense_replace": "NaN"`),
      ),
    'm/config.json:9:84: first_k_dense_replace: expected a non-negative integer, got "NaN"',
  );
  assert.equal(loadConfig(["i.yaml"], "c.yaml", cfg(`  "max_position_embeddings": 8192`)).model.maxPositions, 8192);
});

Deno.test("finding 10: a huge expect expression is a located error, not a stack overflow", () => {
  const expr = `< ${Array(10_000).fill("1").join(" + ")}`;
  const fs = memoryFs({ "s.yaml": `${SCENARIO_HEAD}expect:\n  total_requests: "${expr}"\n` });
  throwsInput(
    () => loadScenario("s.yaml", fs),
    "s.yaml:4:19: expect.total_requests: expression too long (39999 characters; at most 1000)",
  );
  const deep = `< ${"(".repeat(50)}1${")".repeat(50)}`;
  const fs2 = memoryFs({ "s.yaml": `${SCENARIO_HEAD}expect:\n  total_requests: "${deep}"\n` });
  throwsInput(
    () => loadScenario("s.yaml", fs2),
    "s.yaml:4:19: expect.total_requests: expression nested too deeply (more than 32 parentheses)",
  );
});

Deno.test("finding 11: messages quote at most 80 characters of user content, control characters escaped", () => {
  const passwd = Array.from({ length: 40 }, (_, i) => `user${i}:x:${i}:${i}:User ${i}:/home/user${i}:/bin/sh`)
    .join("\n");
  const fs = memoryFs({
    "i.yaml": INSTANCE_OK.replace("H100_SXM_80G", "/etc/passwd"),
    "/etc/passwd": passwd,
    "c.yaml": COMMON_OK,
  });
  throwsInput(
    () => loadConfig(["i.yaml"], "c.yaml", fs),
    `/etc/passwd:1:1: expected a mapping, got "user0:x:0:0:User 0:/home/user0:/bin/sh user1:x:1:1:User 1:/home/user1:/bin/sh us"… (${passwd.length} characters)`,
  );
  const garbage = "\\x01\\x1b[2J\\u202e".repeat(2500);
  const fs2 = memoryFs({ "i.yaml": INSTANCE_OK.replace("H100_SXM_80G", `"${garbage}"`), "c.yaml": COMMON_OK });
  assert.throws(() => loadConfig(["i.yaml"], "c.yaml", fs2), (e) => {
    if (!(e instanceof InputError)) throw e;
    const quoted = /unknown device '(.*)' \(known/.exec(e.message)![1];
    assert.equal(quoted, "\\u0001\\u001b[2J\\u202e".repeat(13) + "\\u0001\\u001b…");
    // deno-lint-ignore no-control-regex -- these are the characters escaped
    assert.doesNotMatch(e.message, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    return true;
  });
  const key = "k".repeat(1000);
  throwsInput(
    () =>
      loadConfig(["i.yaml"], "c.yaml", memoryFs({ "i.yaml": `${INSTANCE_OK}    ${key}: 1\n`, "c.yaml": COMMON_OK })),
    `i.yaml:6:5: instance_groups[0].${"k".repeat(80)}…: unknown key '${"k".repeat(80)}…'`,
  );
});

Deno.test("finding 12: a negative tolerance is an error", () => {
  assert.equal(parseBound("== 100 ± -5%"), "a tolerance cannot be negative, got -5%");
  assert.equal(parseBound("== 100 ± -2ms"), "a tolerance cannot be negative, got -2ms");
  assert.deepEqual(parseBound("== 100 ± 5%"), {
    op: "==",
    rhs: { kind: "num", value: 100 },
    tolerance: { amount: 0.05, relative: true },
    text: "== 100 ± 5%",
  });
  const fs = memoryFs({ "s.yaml": `${SCENARIO_HEAD}expect:\n  total_requests: "== 50 ± -5%"\n` });
  throwsInput(
    () => loadScenario("s.yaml", fs),
    "s.yaml:4:19: expect.total_requests: a tolerance cannot be negative, got -5%",
  );
});

Deno.test("finding 4: an override key named like a built-in property is an unknown key, and pollutes nothing", () => {
  const fs = memoryFs({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": `${SCENARIO_HEAD}overrides:\n  load_gen.__proto__.polluted: 1\nexpect:\n  total_requests: "== 50"\n`,
  });
  throwsInput(
    () => runScenario(loadScenario("s.yaml", fs), fs),
    "s.yaml:4:32: load_gen.__proto__: unknown key '__proto__'",
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("finding 12: a scenario seed of 2^32 or more is an error, not a seed that wraps", () => {
  const fs = memoryFs({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": "name: s\ninstance_config: i.yaml\ncommon_config: c.yaml\nseed: 4294967296\n",
  });
  assert.throws(
    () => loadScenario("s.yaml", fs),
    (e: Error) => e.message === "s.yaml:4:7: seed: expected an integer below 2^32 (4294967296), got 4294967296",
  );
});
