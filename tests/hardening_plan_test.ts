/**
 * Issue 25's `plan` reproducers, each with the exact exit code and message
 * a user gets: a merge validates every shard against the one shard schema
 * and the request's own candidates (no injected line reaches stdout or a
 * written file), refuses a count past the limit before allocating for it,
 * and never exits 0 on part of a search; every count a user gives is
 * checked against TASK_LIMITS before any work; a target rate the common
 * file cannot take is named as the flag, not as a temporary scenario; and
 * outputs never go through a symbolic link.
 */
import assert from "node:assert/strict";
import { PlanRequestError, planShard } from "../core/planner/planner.ts";
import type { PlanRequest } from "../core/planner/planner.ts";
import { runPlan } from "../tools/plan.ts";
import { captureTaskAsync } from "./_helpers.ts";

const COMMON = `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: fixed_length, num_requests: 20, num_input_tokens: 128, num_output_tokens: 16, request_rate: 1.0}
`;

/** A folder with the common file and the outside file a write must never reach. */
function folder(): string {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-h25-plan-" });
  Deno.writeTextFileSync(`${dir}/c.yaml`, COMMON);
  Deno.mkdirSync(`${dir}/outside`);
  Deno.writeTextFileSync(`${dir}/outside/precious.txt`, "precious\n");
  return dir;
}

/** The flags of a two-candidate search (H100 at TP 1 and 2) of the folder's common file. */
const search = (dir: string) => [
  "--common_config_path",
  `${dir}/c.yaml`,
  "--target_rate",
  "2",
  "--slo",
  "ttft.p99<=2",
  "--devices",
  "H100_SXM_80G",
  "--tp",
  "1,2",
  "--workers",
  "1",
];

/** The two shards of the search, written by `--shard` into `dir/shards`, as parsed JSON by file name. */
async function shards(dir: string): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const i of [0, 1]) {
    const r = await captureTaskAsync(runPlan, [...search(dir), "--shard", `${i}/2`, "--out", `${dir}/shards`]);
    assert.equal(r.code, 0, r.stderr);
    const name = `plan.shard-${i}-of-2.json`;
    out[name] = JSON.parse(Deno.readTextFileSync(`${dir}/shards/${name}`));
  }
  return out;
}

/** Writes `doc` as the shard `name` of `dir/shards`. */
const put = (dir: string, name: string, doc: unknown) =>
  Deno.writeTextFileSync(`${dir}/shards/${name}`, typeof doc === "string" ? doc : JSON.stringify(doc));

/** `plan --merge dir/shards --out dir/out`, its lines. */
const merge = (dir: string) => captureTaskAsync(runPlan, ["--merge", `${dir}/shards`, "--out", `${dir}/out`]);

/** Whether anything is at `path` (a link counts, dangling or not). */
function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The outcome `i` of a parsed shard. */
const outcome = (doc: Record<string, unknown>, i = 0) =>
  ((doc.outcomes as unknown[][])[i][1]) as Record<string, unknown>;

Deno.test("plan --merge: a shard's device name carrying a workflow command is refused; nothing reaches stdout or deployment.yaml", async () => {
  const dir = folder();
  try {
    const docs = await shards(dir);
    const ok = await merge(dir);
    assert.equal(ok.code, 0, ok.stderr);
    const s0 = docs["plan.shard-0-of-2.json"];
    const cases: [(d: Record<string, unknown>) => void, string][] = [
      [
        (d) => outcome(d).device = "H100\n::error::injected\ninstance_groups: []",
        'expected no control characters, got "H100\\n::error::injected\\ninstance_groups: []" at outcomes[0][1].device',
      ],
      [
        (d) => outcome(d).device = "A100_SXM_80G",
        `expected one of the request's devices (H100_SXM_80G), got "A100_SXM_80G" at outcomes[0][1].device`,
      ],
      [
        (d) => outcome(d).tokensPerDevice = -5,
        "expected a finite number ≥ 0, got -5 at outcomes[0][1].tokensPerDevice",
      ],
      [(d) => outcome(d).devices = -1, "expected a positive integer, got -1 at outcomes[0][1].devices"],
      [(d) => outcome(d).devices = 3, "expected instances × tp (1), got 3 at outcomes[0][1].devices"],
      [
        (d) => outcome(d).tp = 2,
        "expected candidate 0 of the request (H100_SXM_80G tp 1 agg), got H100_SXM_80G tp 2 agg at outcomes[0][1]",
      ],
      [(d) => outcome(d).extra = 1, "unknown key 'extra' at outcomes[0][1]"],
      // The request is checked as a fresh plan's flags are.
      [
        (d) => (d.request as PlanRequest & { devices: string[] }).devices[0] = "H100",
        'expected a catalog device, got "H100" at request.devices[0]',
      ],
      [
        (d) => (d.request as { seeds: number }).seeds = 1_000_000,
        "expected at most 100 seeds (the limit of a run), got 1000000 at request.seeds",
      ],
      [
        (d) => (d.request as { slos: unknown[] }).slos = [{ key: "nope", bound: "<= 2" }],
        "unknown metric 'nope' at request.slos[0]",
      ],
      [
        (d) => (d.request as { targetRate: number }).targetRate = -2,
        "expected a positive number, got -2 at request.targetRate",
      ],
    ];
    for (const [mutate, detail] of cases) {
      const doc = structuredClone(s0);
      mutate(doc);
      put(dir, "plan.shard-0-of-2.json", doc);
      if (exists(`${dir}/out`)) Deno.removeSync(`${dir}/out`, { recursive: true });
      const r = await merge(dir);
      assert.equal(r.code, 2, detail);
      assert.equal(r.stderr, `${dir}/shards/plan.shard-0-of-2.json: not a plan shard: ${detail}\n`);
      assert.equal(r.stdout, "");
      assert.equal(exists(`${dir}/out`), false);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan --merge: a shard of another shape is exit 2 'not a plan shard', never an uncaught exception", async () => {
  const dir = folder();
  try {
    Deno.mkdirSync(`${dir}/shards`);
    const cases: [string, string][] = [
      [
        '{"request":{},"shard":{"index":0,"count":1},"outcomes":[[0,null]]}',
        "missing required key 'commonFile' at request",
      ],
      ['{"request":{},"shard":{"index":0,"count":1},"outcomes":[]}', "missing required key 'commonFile' at request"],
      [
        '{"request":{},"shard":{"index":0,"count":9007199254740991},"outcomes":[]}',
        "missing required key 'commonFile' at request",
      ],
      ["[]", "expected an object of request, shard and outcomes (as --shard writes), got a list"],
      ['{"request"', "not JSON (Expected ':' after property name in JSON at position 10 (line 1 column 11))"],
      ['{"__proto__":{}}', "unknown key '__proto__' at __proto__"],
    ];
    for (const [text, detail] of cases) {
      put(dir, "plan.shard-0-of-1.json", text);
      const r = await merge(dir);
      assert.equal(r.code, 2, text);
      assert.equal(r.stderr, `${dir}/shards/plan.shard-0-of-1.json: not a plan shard: ${detail}\n`);
    }
    // With a valid request, the outcomes themselves: null, none at all, a count past the limit.
    const docs = await shards(dir);
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-1.json`);
    const whole = (d: Record<string, unknown>) => ({ ...d, shard: { index: 0, count: 1 } });
    const s0 = docs["plan.shard-0-of-2.json"];
    Deno.removeSync(`${dir}/shards/plan.shard-1-of-2.json`);
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-2.json`);
    const more: [unknown, string][] = [
      [{ ...whole(s0), outcomes: [[0, null]] }, "expected an object, got null at outcomes[0][1]"],
      [{ ...whole(s0), outcomes: [] }, "candidate 0 of shard 0/1 missing (0 of 2 outcomes) at outcomes"],
      [
        { ...s0, shard: { index: 0, count: 9007199254740991 } },
        "expected at most 10000 shards, got 9007199254740991 at shard.count",
      ],
    ];
    for (const [doc, detail] of more) {
      put(dir, "plan.shard-0-of-1.json", doc);
      const r = await merge(dir);
      assert.equal(r.code, 2, detail);
      assert.equal(r.stderr, `${dir}/shards/plan.shard-0-of-1.json: not a plan shard: ${detail}\n`);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan --merge: a count of 50,000,000 is refused before anything is allocated; missing shards are listed up to ten", async () => {
  const dir = folder();
  try {
    const docs = await shards(dir);
    Deno.removeSync(`${dir}/shards/plan.shard-1-of-2.json`);
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-2.json`);
    const s0 = docs["plan.shard-0-of-2.json"];
    put(dir, "plan.shard-0-of-50000000.json", { ...s0, shard: { index: 0, count: 50_000_000 } });
    const big = await merge(dir);
    assert.equal(big.code, 2);
    assert.equal(
      big.stderr,
      `${dir}/shards/plan.shard-0-of-50000000.json: not a plan shard: expected at most 10000 shards, got 50000000 at shard.count\n`,
    );
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-50000000.json`);
    // Shard 0 of 10,000 (the search's first candidate): 9,999 shards missing, ten of them named.
    put(dir, "plan.shard-0-of-10000.json", {
      ...s0,
      shard: { index: 0, count: 10_000 },
      outcomes: (s0.outcomes as unknown[]).slice(0, 1),
    });
    const many = await merge(dir);
    assert.equal(many.code, 2);
    assert.equal(
      many.stderr,
      `${dir}/shards: shards 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 … (9,999 in all) of 10000 missing\n`,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan --merge: a count of 0, or half a search passed off as a whole one, is exit 2, never a plan", async () => {
  const dir = folder();
  try {
    const docs = await shards(dir);
    const s0 = docs["plan.shard-0-of-2.json"];
    Deno.removeSync(`${dir}/shards/plan.shard-1-of-2.json`);
    const half = await merge(dir);
    assert.equal(half.code, 2);
    assert.equal(half.stderr, `${dir}/shards: shard 1 of 2 missing\n`);
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-2.json`);
    put(dir, "plan.shard-0-of-0.json", { ...s0, shard: { index: 0, count: 0 } });
    const zero = await merge(dir);
    assert.equal(zero.code, 2);
    assert.equal(
      zero.stderr,
      `${dir}/shards/plan.shard-0-of-0.json: not a plan shard: expected a positive integer, got 0 at shard.count\n`,
    );
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-0.json`);
    // Shard 0 of 2 relabelled as the only shard: its candidate 1 is missing.
    put(dir, "plan.shard-0-of-1.json", { ...s0, shard: { index: 0, count: 1 } });
    const relabelled = await merge(dir);
    assert.equal(relabelled.code, 2);
    assert.equal(
      relabelled.stderr,
      `${dir}/shards/plan.shard-0-of-1.json: not a plan shard: candidate 1 of shard 0/1 missing (1 of 2 outcomes) at outcomes\n`,
    );
    // Renamed: a file must hold the shard its name says.
    Deno.removeSync(`${dir}/shards/plan.shard-0-of-1.json`);
    put(dir, "plan.shard-1-of-2.json", s0);
    const renamed = await merge(dir);
    assert.equal(renamed.code, 2);
    assert.equal(
      renamed.stderr,
      `${dir}/shards/plan.shard-1-of-2.json: not a plan shard: it holds shard 0/2, which --shard writes to plan.shard-0-of-2.json\n`,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan --merge: a symbolic link to a shard is followed; a dangling one cannot be read", async () => {
  const dir = folder();
  try {
    await shards(dir);
    Deno.mkdirSync(`${dir}/elsewhere`);
    Deno.renameSync(`${dir}/shards/plan.shard-1-of-2.json`, `${dir}/elsewhere/plan.shard-1-of-2.json`);
    Deno.symlinkSync(`${dir}/elsewhere/plan.shard-1-of-2.json`, `${dir}/shards/plan.shard-1-of-2.json`);
    const linked = await merge(dir);
    assert.equal(linked.code, 0, linked.stderr);
    assert.match(linked.stdout, /^ +2 +H100_SXM_80G +2 +agg /m);
    Deno.removeSync(`${dir}/elsewhere/plan.shard-1-of-2.json`);
    const dangling = await merge(dir);
    assert.equal(dangling.code, 2);
    assert.equal(dangling.stderr, `${dir}/shards/plan.shard-1-of-2.json: cannot read: no such file or directory\n`);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan: every count a user gives is checked against TASK_LIMITS before any work", async () => {
  const dir = folder();
  try {
    const cases: [string[], string][] = [
      [["--seeds", "1000000"], "--seeds: expected an integer from 1 to 100 (the most seeds of a run), got '1000000'"],
      [
        ["--top", "1000000"],
        "--top: expected an integer from 1 to 10,000 (the most candidates of a search), got '1000000'",
      ],
      [
        ["--workers", "1000000"],
        "--workers: expected an integer from 1 to 256 (threads beyond a few hundred only contend for the cores), got '1000000'",
      ],
      [
        ["--shard", "0/50000000", "--out", `${dir}/out`],
        "--shard: expected at most 10,000 shards, got '0/50000000'",
      ],
      [
        ["--tp", Array.from({ length: 10_001 }, (_, i) => i + 1).join(",")],
        "--tp: expected at most 10000 entries, got 10001",
      ],
      [
        [
          "--max_num_seqs",
          Array.from({ length: 100 }, (_, i) => i + 1).join(","),
          "--max_tokens_budget",
          Array.from({ length: 101 }, (_, i) => i + 1000).join(","),
        ],
        "the search has 20,200 candidates (devices × TP sizes × layouts × topologies × settings), more than 10,000; " +
        "split it into several plans",
      ],
      [["--tp", "1,1"], "--tp: 1 is given twice"],
    ];
    for (const [flags, message] of cases) {
      const r = await captureTaskAsync(runPlan, [...search(dir), ...flags]);
      assert.equal(r.code, 2, message);
      assert.equal(r.stderr, `plan: ${message} (deno task plan --help)\n`);
      assert.equal(r.stdout, "");
    }
    assert.equal(exists(`${dir}/out`), false);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan --target_rate 1e-9: the message names the flag and its value, never the planner's temporary scenario", async () => {
  const dir = folder();
  try {
    const message =
      "plan: --target_rate: 1e-9 req/s: the arrivals of 20 requests would span 19000000000 s, more than " +
      "limits.max_arrival_seconds (1e9 s; simulated times are integer µs, exact up to about 285 years) " +
      "(deno task plan --help)\n";
    for (const workers of ["1", "2"]) {
      const flags = search(dir).map((f) => (f === "2" ? "1e-9" : f));
      const r = await captureTaskAsync(runPlan, [...flags, "--workers", workers, "--topology", "agg,disagg"]);
      assert.equal(r.code, 2);
      assert.equal(r.stderr, message);
    }
    // The planner itself, handed such a request, names the field (the CLI's flag), not its in-memory scenario.
    const request: PlanRequest = {
      commonFile: `${dir}/c.yaml`,
      targetRate: 1e-9,
      slos: [{ key: "ttft.p99", bound: "<= 2" }],
      devices: ["H100_SXM_80G"],
      tpSizes: [1],
      maxDevices: 8,
    };
    assert.throws(
      () => planShard(request, { index: 0, count: 1 }),
      (e) => e instanceof PlanRequestError && e.field === "targetRate" && !e.message.includes(".plan-"),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("plan --out, --report-dir, --shard and --merge never write through a symbolic link, checked before the search", async () => {
  const dir = folder();
  try {
    const precious = `${dir}/outside/precious.txt`;
    const trap = (folder: string, name: string) => {
      Deno.mkdirSync(folder, { recursive: true });
      Deno.symlinkSync("../outside/precious.txt", `${folder}/${name}`);
    };
    trap(`${dir}/out`, "plan.json");
    trap(`${dir}/report`, "plan.html");
    trap(`${dir}/sharded`, "plan.shard-0-of-2.json");
    const cases: [string[], string][] = [
      [["--out", `${dir}/out`], `--out: ${dir}/out/plan.json`],
      [["--report-dir", `${dir}/report`], `--report-dir: ${dir}/report/plan.html`],
      [["--shard", "0/2", "--out", `${dir}/sharded`], `--out: ${dir}/sharded/plan.shard-0-of-2.json`],
    ];
    for (const [flags, what] of cases) {
      const r = await captureTaskAsync(runPlan, [...search(dir), ...flags]);
      assert.equal(r.code, 2, what);
      assert.equal(
        r.stderr,
        `plan: ${what} is a symbolic link; outputs are never written through one (remove it) (deno task plan --help)\n`,
      );
      // Refused before the search: no table printed, nothing else written.
      assert.equal(r.stdout, "");
    }
    assert.deepEqual([...Deno.readDirSync(`${dir}/out`)].map((e) => e.name), ["plan.json"]);
    // A merge writes into the shard folder by default: a link there is refused as --merge's.
    await shards(dir);
    trap(`${dir}/shards`, "deployment.yaml");
    const merged = await captureTaskAsync(runPlan, ["--merge", `${dir}/shards`]);
    assert.equal(merged.code, 2);
    assert.equal(
      merged.stderr,
      `plan: --merge: ${dir}/shards/deployment.yaml is a symbolic link; outputs are never written through one ` +
        "(remove it) (deno task plan --help)\n",
    );
    assert.equal(Deno.readTextFileSync(precious), "precious\n");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
