import assert from "node:assert/strict";
import { collectRows, loadRegistry } from "./registry.ts";
import { InputError } from "../config/errors.ts";
import { memoryFs } from "./_memory_fs.ts";

const REGISTRY = `sources:
  - id: pub-a
    publisher: A
    document: a report
    rigs:
      - {id: rig-a, hardware: 1 × H100, engine: vLLM 0.10.0, model: Llama-3.1-8B, harness: h, fit: [a-1], sets: [launch_us.cuda]}
  - id: pub-b
    publisher: B
    document: b report
    rigs:
      - {id: rig-b, hardware: 1 × H100, engine: vLLM 0.10.0, model: Llama-3.1-8B, harness: h}
`;
const row = (id: string, rig: string) =>
  `instance_config: i.yaml
common_config: c.yaml
measured:
  - {id: ${id}, rig: ${rig}, metric: tpot.median, value: 0.01, max_error: 0.25, source: "test"}
`;
const CONFIGS = {
  "i.yaml":
    "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}]\n",
  "c.yaml": "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
    "load_gen: {num_requests: 4, num_input_tokens: 64, num_output_tokens: 8}\nserving_config: {max_concurrency: 4}\n",
};
const fs = (files: Record<string, string>) =>
  memoryFs({ ...CONFIGS, ...Object.fromEntries(Object.entries(CONFIGS).map(([k, v]) => [`fit/${k}`, v])), ...files });

Deno.test("registry: rows take their role from their rig; fit rows live under the fit folder", () => {
  const f = fs({
    "r.yaml": REGISTRY,
    "fit/a.yaml": row("a-1", "rig-a"),
    "fit/a2.yaml": row("a-2", "rig-a"),
    "b.yaml": row("b-1", "rig-b"),
  });
  const reg = loadRegistry("r.yaml", f);
  assert.equal(reg.rigs.get("rig-a")!.source.id, "pub-a");
  const rows = collectRows(["fit/a.yaml", "fit/a2.yaml", "b.yaml"], reg, "fit", f);
  assert.deepEqual(rows.map((r) => [r.id, r.role, r.sameRig]), [
    ["a-1", "fit", false],
    ["a-2", "validation", true], // another row of a fit rig: reported apart, never held out
    ["b-1", "validation", false],
  ]);
});

Deno.test("registry: every mistake is an error at its file, line and key", () => {
  const fails = (files: Record<string, string>, paths: string[], want: RegExp) =>
    assert.throws(() => collectRows(paths, loadRegistry("r.yaml", fs(files)), "fit", fs(files)), (e) => {
      assert.ok(e instanceof InputError, String(e));
      assert.match(e.message, want);
      return true;
    });
  fails(
    { "r.yaml": REGISTRY, "a.yaml": row("a-1", "rig-a") },
    ["a.yaml"],
    /^a\.yaml:4:\d+: measured\[0\]: 'a-1' is a fit row of rig-a: its scenario belongs under fit$/,
  );
  fails(
    { "r.yaml": REGISTRY, "fit/a.yaml": row("a-1", "rig-zz") },
    ["fit/a.yaml"],
    /measured\[0\]: rig 'rig-zz' is not in r\.yaml/,
  );
  fails(
    { "r.yaml": REGISTRY, "fit/a.yaml": row("a-1", "rig-a"), "b.yaml": row("a-1", "rig-b") },
    ["fit/a.yaml", "b.yaml"],
    /b\.yaml:4:\d+: measured\[0\]: row id 'a-1' is used twice/,
  );
  fails({ "r.yaml": REGISTRY, "b.yaml": row("b-1", "rig-b") }, ["b.yaml"], /fit row 'a-1' of rig-a is in no scenario/);
  fails(
    { "r.yaml": REGISTRY.replace("launch_us.cuda", "launch_us.tpu"), "fit/a.yaml": row("a-1", "rig-a") },
    ["fit/a.yaml"],
    /^r\.yaml:6:\d+: sources\[0\]\.rigs\[0\]\.sets\[0\]: no calibrated constant 'launch_us\.tpu'$/,
  );
  fails(
    { "r.yaml": REGISTRY.replace("id: pub-b", "id: pub-a"), "fit/a.yaml": row("a-1", "rig-a") },
    ["fit/a.yaml"],
    /sources\[1\]\.id: source id 'pub-a' appears twice/,
  );
});
