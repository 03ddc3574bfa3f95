import assert from "node:assert/strict";
import { engineSpec, input } from "./_fixtures.ts";
import { unservable, unservableReason } from "./unservable.ts";
import { simulate } from "./simulator.ts";

Deno.test("vLLM V0: a request needs a free block beside those it holds at its last decode", () => {
  // 100 + 28 tokens: the KV of 127 fits 8 blocks of 16 exactly, but V0's last decode (126 tokens held in 8
  // blocks) asks for one more free block (can_append_slots): it never completes on 8 blocks.
  const v0 = engineSpec({ scheduler: "vllm_v0", blockSize: 16, kvBlocks: 8 });
  assert.equal(unservable(engineSpec({ scheduler: "vllm_v1", blockSize: 16, kvBlocks: 8 }), 100, 28), undefined);
  assert.equal(
    unservableReason(v0, 100, 28),
    "needs 9 KV blocks (127 tokens with the free blocks the engine's block manager keeps) but an engine holds 8 (128 tokens)",
  );
  assert.equal(unservable(engineSpec({ scheduler: "vllm_v0", blockSize: 16, kvBlocks: 9 }), 100, 28), undefined);
});

Deno.test("vLLM V0: a request must be readmissible with the 1% watermark left free", () => {
  // 300 blocks: a watermark of 3. A lifetime of 298 blocks (4,768 tokens) could not be readmitted after a late
  // preemption (V0's AllocStatus.NEVER), so it is refused up front; V1 (no watermark) serves it.
  const spec = (scheduler: "vllm_v0" | "vllm_v1") => engineSpec({ scheduler, blockSize: 16, kvBlocks: 300 });
  assert.equal(unservable(spec("vllm_v1"), 4000, 769), undefined);
  assert.equal(unservable(spec("vllm_v0"), 4000, 769), "kv");
  assert.equal(unservable(spec("vllm_v0"), 4000, 721), undefined); // 4,720 tokens: 295 blocks + 3
});

Deno.test("vLLM V0: a request that just fits runs to the end alone, its last decodes beside one free block", () => {
  // 9 blocks: the 127-token lifetime of 8 blocks plus the free block each decode asks for. The run ends (no
  // stall, no preemption) with every token produced.
  const r = simulate(
    input({ numRequests: 3, inputTokens: 100, outputTokens: 28 }, { scheduler: "vllm_v0", blockSize: 16, kvBlocks: 9 }),
  );
  assert.equal(r.engines[0].served, 3);
  assert.equal(r.engines[0].preemptions, 0);
});

Deno.test("vLLM V0: the watermark stays free beside any admission, a no-evict one included", () => {
  // 404 blocks: a watermark of 4. A 402-token prompt on a prefill engine never fits (V0 would never admit it), even
  // where the admission sets aside the request's whole lifetime and so never preempts.
  const spec = engineSpec({ scheduler: "vllm_v0", blockSize: 1, kvBlocks: 404, admission: "guaranteed_no_evict" });
  assert.equal(unservable(spec, 400, 1), undefined);
  assert.equal(unservable(spec, 402, 1), "kv");
});
