// Policy-language benchmark: evaluation throughput against cel-js (typed Environment) and Cedar
// (statefulIsAuthorized) on the same inputs with answers cross-checked, and the median time to
// parse, check and compile one policy; then the worst case over a generated hostile corpus at 1, 2
// and 4 KiB. A benchmark, never a timed test: it prints, it does not assert timing, and it fails
// only when the engines disagree or a hostile policy breaks a bound that is not about time.
import { compilePolicy, costMeter, decideChain, lintPolicy, LIMITS } from "@agent-authority/language";
import { Environment } from "@marcbachmann/cel-js";
import { policyGate } from "../../packages/engine/dist/policy-gate.js";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { availableParallelism, loadavg } from "node:os";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1);
const ROUNDS = 3;

/** The same policy in three languages, and a generator of realistic inputs for it. */
const policies = [
  {
    name: "threshold",
    ours: "amount_minor <= 50000 && (amount_minor < 10000 || approver != null)",
    cel: "amount_minor <= 50000 && (amount_minor < 10000 || approver != null)",
    cedar:
      "permit(principal, action, resource) when { context.amount_minor <= 50000 && (context.amount_minor < 10000 || context has approver) };",
    input: (r) => base(r, {}),
  },
  {
    name: "payments (tool list, args, time of day)",
    ours: [
      'tool in ["payments.transfer", "payments.refund", "invoices.read", "invoices.create"]',
      '&& currency in ["EUR", "USD"]',
      "&& amount_minor <= 250000",
      "&& hour_utc >= 8 && hour_utc < 18",
      '&& weekday_utc in ["mon", "tue", "wed", "thu", "fri"]',
      '&& (args.recipient_country in ["DE", "FR", "NL", "BE", "AT"] || approver != null)',
      '&& args.memo != "test"',
    ].join(" "),
    cel: [
      'tool in ["payments.transfer", "payments.refund", "invoices.read", "invoices.create"]',
      '&& currency in ["EUR", "USD"]',
      "&& amount_minor <= 250000",
      "&& hour_utc >= 8 && hour_utc < 18",
      '&& weekday_utc in ["mon", "tue", "wed", "thu", "fri"]',
      '&& (args.recipient_country in ["DE", "FR", "NL", "BE", "AT"] || approver != null)',
      '&& args.memo != "test"',
    ].join(" "),
    cedar: [
      "permit(principal, action, resource) when {",
      '["payments.transfer", "payments.refund", "invoices.read", "invoices.create"].contains(context.tool)',
      '&& ["EUR", "USD"].contains(context.currency)',
      "&& context.amount_minor <= 250000",
      "&& context.hour_utc >= 8 && context.hour_utc < 18",
      '&& ["mon", "tue", "wed", "thu", "fri"].contains(context.weekday_utc)',
      '&& (["DE", "FR", "NL", "BE", "AT"].contains(context.args.recipient_country) || context has approver)',
      '&& context.args.memo != "test"',
      "};",
    ].join(" "),
    input: (r) =>
      base(r, {
        tool: pick(r, ["payments.transfer", "payments.refund", "invoices.read", "invoices.create", "admin.delete_user"]),
        args: { recipient_country: pick(r, ["DE", "FR", "US", "NL", "CN"]), memo: pick(r, ["rent", "test", "invoice 42"]) },
      }),
  },
  {
    name: "crm, email and spending (prefixes, suffixes, arithmetic)",
    ours: [
      '(startsWith(tool, "crm.") && !(tool in ["crm.delete_contact", "crm.export_all"]))',
      '|| (tool == "email.send" && args.recipients <= 50 && endsWith(args.to, "@example.com"))',
      '|| (tool == "payments.transfer" && amount_minor + spent_minor <= 1000000 && uses < 100',
      '&& (amount_minor < 50000 || approver in ["cfo@example.com", "controller@example.com"]))',
    ].join(" "),
    cel: [
      '(tool.startsWith("crm.") && !(tool in ["crm.delete_contact", "crm.export_all"]))',
      '|| (tool == "email.send" && args.recipients <= 50 && args.to.endsWith("@example.com"))',
      '|| (tool == "payments.transfer" && amount_minor + spent_minor <= 1000000 && uses < 100',
      '&& (amount_minor < 50000 || (approver != null && approver in ["cfo@example.com", "controller@example.com"])))',
    ].join(" "),
    cedar: [
      "permit(principal, action, resource) when {",
      '(context.tool like "crm.*" && !(["crm.delete_contact", "crm.export_all"].contains(context.tool)))',
      '|| (context.tool == "email.send" && context.args.recipients <= 50 && context.args.to like "*@example.com")',
      '|| (context.tool == "payments.transfer" && context.amount_minor + context.spent_minor <= 1000000 && context.uses < 100',
      '&& (context.amount_minor < 50000 || (context has approver && ["cfo@example.com", "controller@example.com"].contains(context.approver))))',
      "};",
    ].join(" "),
    input: (r) => {
      const tool = pick(r, ["crm.read_contact", "crm.delete_contact", "crm.update_deal", "email.send", "payments.transfer", "files.read"]);
      const args = tool === "email.send" ? { recipients: Math.floor(r() * 80), to: pick(r, ["ann@example.com", "bob@elsewhere.org"]) } : {};
      return base(r, { tool, args, approver: pick(r, [null, "cfo@example.com", "intern@example.com"]) });
    },
  },
];

/** A deterministic pseudo-random source, so every run sees the same inputs. */
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];

function base(r, overrides) {
  return {
    amount_minor: pick(r, [500, 9_999, 10_000, 20_000, 50_000, 50_001, 120_000, 300_000]),
    currency: pick(r, ["EUR", "USD", "GBP"]),
    tool: "payments.transfer",
    approver: pick(r, [null, null, "cfo@example.com"]),
    agent: "agent-7",
    principal: "alice@example.com",
    audience: "payments",
    uses: Math.floor(r() * 120),
    spent_minor: Math.floor(r() * 1_200_000),
    hour_utc: Math.floor(r() * 24),
    weekday_utc: pick(r, ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]),
    args: {},
    ...overrides,
  };
}

/** cel-js takes CEL ints as BigInt; a null approver is simply null. */
function celContext(env) {
  const args = {};
  for (const [k, v] of Object.entries(env.args)) args[k] = typeof v === "number" ? BigInt(v) : v;
  return {
    amount_minor: BigInt(env.amount_minor),
    currency: env.currency,
    tool: env.tool,
    approver: env.approver,
    uses: BigInt(env.uses),
    spent_minor: BigInt(env.spent_minor),
    hour_utc: BigInt(env.hour_utc),
    weekday_utc: env.weekday_utc,
    args,
  };
}

/** Cedar has no null: an absent approver is an absent attribute. */
function cedarCall(env, id) {
  const { approver, agent: _a, principal: _p, audience: _u, ...context } = env;
  if (approver !== null) context.approver = approver;
  return {
    principal: { type: "Agent", id: env.agent },
    action: { type: "Action", id: "authorize" },
    resource: { type: "Tool", id: env.tool },
    context,
    preparsedPolicySetId: id,
    entities: [],
  };
}

const celEnvironment = new Environment()
  .registerVariable("amount_minor", "int")
  .registerVariable("currency", "string")
  .registerVariable("tool", "string")
  .registerVariable("approver", "dyn")
  .registerVariable("uses", "int")
  .registerVariable("spent_minor", "int")
  .registerVariable("hour_utc", "int")
  .registerVariable("weekday_utc", "string")
  .registerVariable("args", "map");

/** Calls per second of `step` over the inputs, best of ROUNDS rounds of SECONDS each. */
function throughput(inputs, step) {
  let best = 0;
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let calls = 0;
    const start = process.hrtime.bigint();
    const budget = BigInt(Math.round(SECONDS * 1e9));
    let elapsed = 0n;
    while (elapsed < budget) {
      for (let i = 0; i < inputs.length; i++) if (step(inputs[i])) sink++;
      calls += inputs.length;
      elapsed = process.hrtime.bigint() - start;
    }
    best = Math.max(best, calls / (Number(elapsed) / 1e9));
  }
  if (sink < 0) throw new Error("unreachable");
  return best;
}

/** Inputs per block of `alternated`: short enough that a preemption falls in few blocks. */
const BLOCK = 16;

/**
 * Nanoseconds per call of `a` and of `b` on the same inputs, alternated block by block (`a` on
 * BLOCK inputs, then `b` on the same ones) for ROUNDS × SECONDS, so that both see the same load,
 * heap and state of the JIT, and their ratio does not depend on what ran before (decision 0147).
 * Each side's figure is its median block; the ratio is the median of the pairs' ratios, so that a
 * block the scheduler interrupted moves neither.
 */
function alternated(inputs, a, b) {
  let sink = 0;
  for (let i = 0; i < inputs.length; i++) if (a(inputs[i]) || b(inputs[i])) sink++;
  const ta = [];
  const tb = [];
  const ratios = [];
  const end = process.hrtime.bigint() + BigInt(Math.round(ROUNDS * SECONDS * 2e9));
  for (let k = 0; process.hrtime.bigint() < end; k = (k + BLOCK) % inputs.length) {
    const t0 = process.hrtime.bigint();
    for (let i = k; i < k + BLOCK; i++) if (a(inputs[i])) sink++;
    const t1 = process.hrtime.bigint();
    for (let i = k; i < k + BLOCK; i++) if (b(inputs[i])) sink++;
    const t2 = process.hrtime.bigint();
    ta.push(Number(t1 - t0) / BLOCK);
    tb.push(Number(t2 - t1) / BLOCK);
    ratios.push(Number(t2 - t1) / Number(t1 - t0));
  }
  if (sink < 0) throw new Error("unreachable");
  const median = (xs) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return { aNs: median(ta), bNs: median(tb), ratio: median(ratios) };
}

/**
 * Median nanoseconds of one call of `f`, each call timed on its own: the median of single calls
 * is what "the median time to compile one policy" means, and it is robust against the scheduler
 * preempting a few of them on a busy machine. The clock's own cost (median of an empty call) is
 * subtracted.
 */
function medianNs(f, samples = 20000) {
  for (let i = 0; i < 5000; i++) f();
  const clock = [];
  for (let i = 0; i < 2000; i++) {
    const start = process.hrtime.bigint();
    clock.push(Number(process.hrtime.bigint() - start));
  }
  clock.sort((a, b) => a - b);
  const times = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - start));
  }
  times.sort((a, b) => a - b);
  return Math.max(0, times[Math.floor(times.length / 2)] - clock[Math.floor(clock.length / 2)]);
}

const fmt = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} M/s` : `${(n / 1e3).toFixed(1)} k/s`);
const pad = (s, n) => String(s).padEnd(n);
let disagreements = 0;
const ratios = [];

console.log(`node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()[0].toFixed(2)} (timings scale with load)\n`);

// Compile times first, in a fresh process, before the evaluation runs below have grown the heap.
const threshold = policies[0];
// Warm up the whole pipeline (every policy, so the JIT sees every path) before timing any of it.
for (const deadline = Date.now() + 500; Date.now() < deadline; ) for (const p of policies) compilePolicy(p.ours);
const compileNs = medianNs(() => compilePolicy(threshold.ours));
// cel-js may keep parsed expressions by their text, so both sides get a fresh text on every call.
let serial = 0;
const freshNs = medianNs(() => compilePolicy(threshold.ours.replace("50000", String(50000 + (serial++ % 100000)))));
const celCompileNs = medianNs(() => celEnvironment.parse(threshold.cel.replace("50000", String(50000 + (serial++ % 100000)))));
const cedarCompileNs = medianNs(() => cedar.preparsePolicySet("compile", { staticPolicies: threshold.cedar }), 1000);
const largerNs = policies.slice(1).map((p) => medianNs(() => compilePolicy(p.ours)));
console.log("parse + check + compile, median of one policy");
console.log(`  ${pad("agent-authority compilePolicy", 34)} ${(compileNs / 1000).toFixed(2).padStart(8)} µs   (threshold policy)`);
for (const [i, ns] of largerNs.entries())
  console.log(`  ${pad("agent-authority compilePolicy", 34)} ${(ns / 1000).toFixed(2).padStart(8)} µs   (${policies[i + 1].name})`);
console.log(`  ${pad("agent-authority, a fresh text each", 34)} ${(freshNs / 1000).toFixed(2).padStart(8)} µs   (threshold policy)`);
console.log(
  `  ${pad("cel-js parse + check, fresh text", 34)} ${(celCompileNs / 1000).toFixed(2).padStart(8)} µs   ours is ${(celCompileNs / freshNs).toFixed(1)}x`,
);
console.log(
  `  ${pad("cedar-wasm preparsePolicySet", 34)} ${(cedarCompileNs / 1000).toFixed(2).padStart(8)} µs   ours is ${(cedarCompileNs / compileNs).toFixed(1)}x\n`,
);

console.log(`evaluation throughput (best of ${ROUNDS} rounds of ${SECONDS} s; 256 inputs per policy)\n`);
for (const [index, p] of policies.entries()) {
  const compiled = compilePolicy(p.ours);
  if (!compiled.ok) throw new Error(`${p.name}: ${JSON.stringify(compiled.diagnostics)}`);
  const ours = compiled.policy;
  const cel = celEnvironment.parse(p.cel);
  const cedarId = `policy${index}`;
  const parsed = cedar.preparsePolicySet(cedarId, { staticPolicies: p.cedar });
  if (parsed.type !== "success") throw new Error(`${p.name}: cedar: ${JSON.stringify(parsed)}`);

  const r = random(0x5eed + index);
  const inputs = Array.from({ length: 256 }, () => p.input(r));
  const celInputs = inputs.map(celContext);
  const cedarInputs = inputs.map((env) => cedarCall(env, cedarId));

  // Cross-check: the three engines must give the same answer on every input.
  let allowed = 0;
  for (let i = 0; i < inputs.length; i++) {
    const a = ours.evaluate(inputs[i]);
    const mine = a.ok && a.value;
    const theirs = cel(celInputs[i]) === true;
    const answer = cedar.statefulIsAuthorized(cedarInputs[i]);
    const cedars = answer.type === "success" && answer.response.decision === "allow";
    if (mine) allowed++;
    if (mine !== theirs || mine !== cedars) {
      disagreements++;
      console.log(`  DISAGREEMENT on ${p.name}: ours ${mine}, cel-js ${theirs}, cedar ${cedars}: ${JSON.stringify(inputs[i])}`);
    }
  }

  const oursRate = throughput(inputs, (env) => ours.evaluate(env).value);
  const decideRate = throughput(inputs, (env) => ours.decide(env).outcome === "allow");
  const celRate = throughput(celInputs, (ctx) => cel(ctx));
  const cedarRate = throughput(cedarInputs, (call) => cedar.statefulIsAuthorized(call).type === "success");
  ratios.push(oursRate / celRate);

  console.log(`${p.name}  (${allowed}/${inputs.length} inputs allowed, answers agree: ${disagreements === 0 ? "yes" : "NO"})`);
  console.log(`  ${pad("agent-authority evaluate", 34)} ${pad(fmt(oursRate), 12)} ${(1e9 / oursRate).toFixed(0).padStart(7)} ns/op`);
  console.log(
    `  ${pad("agent-authority decide (partial)", 34)} ${pad(fmt(decideRate), 12)} ${(1e9 / decideRate).toFixed(0).padStart(7)} ns/op`,
  );
  console.log(
    `  ${pad("cel-js (typed Environment)", 34)} ${pad(fmt(celRate), 12)} ${(1e9 / celRate).toFixed(0).padStart(7)} ns/op   ours is ${(oursRate / celRate).toFixed(1)}x`,
  );
  console.log(
    `  ${pad("cedar-wasm (statefulIsAuthorized)", 34)} ${pad(fmt(cedarRate), 12)} ${(1e9 / cedarRate).toFixed(0).padStart(7)} ns/op   ours is ${(oursRate / cedarRate).toFixed(1)}x\n`,
  );
}

// What a decision runs (issue 50): the engine's policy gate, which compiles from its cache, builds
// the environment from the request and the link, makes a cost meter and decides, on each policy's
// inputs; against cel-js given the same request, its values converted to what it takes (BigInt).
const NOW = Date.UTC(2026, 10, 25, 12);
const gateRatios = [];
console.log(
  "what a decision runs: the policy gate per call (environment, meter, decide) against cel-js on the same requests, alternated in blocks of 16 (medians)",
);
for (const p of policies) {
  const r = random(0x9a7e);
  const inputs = Array.from({ length: 256 }, () => p.input(r));
  const calls = inputs.map((env) => {
    const link = {
      grant_id: "grt_1",
      agent_id: env.agent,
      status: "active",
      terms: { policy: p.ours, principal: { type: "user", id: env.principal }, audience: env.audience },
      usage: { uses: env.uses, settled_minor: env.spent_minor, holds: [] },
    };
    const approval =
      env.approver === null
        ? null
        : {
            approval_id: "apv_1",
            approver: env.approver,
            grant_id: "grt_1",
            tool: env.tool,
            amount_ceiling_minor: 1e12,
            expires_at: NOW + 1,
          };
    const request = {
      grant_id: "grt_1",
      agent_id: env.agent,
      tool: env.tool,
      amount_minor: env.amount_minor,
      currency: env.currency,
      audience: env.audience,
      args: env.args,
      approval,
    };
    return { request, chain: [link], env };
  });
  const cel = celEnvironment.parse(p.cel);
  const {
    aNs: gateNs,
    bNs: celNs,
    ratio,
  } = alternated(
    calls,
    (c) => policyGate(c.request, c.chain, NOW).ok,
    (c) => cel(celContext(c.env)),
  );
  gateRatios.push(ratio);
  console.log(
    `  ${pad(p.name, 56)} gate ${gateNs.toFixed(0).padStart(6)} ns/op   cel-js ${celNs.toFixed(0).padStart(6)} ns/op   ours is ${ratio.toFixed(1)}x`,
  );
}
console.log("");

// The worst case: hostile shapes grown to each size, the slowest of each measure reported.
const UTF8 = new TextEncoder();
const bytes = (text) => UTF8.encode(text).length;

/** The largest text of `grow(n)` that compiles within `size` bytes (`grow` must grow with `n`). */
function largest(grow, size) {
  let best;
  for (let n = 1; n < 10_000; n++) {
    const text = grow(n);
    if (bytes(text) > size) break;
    if (compilePolicy(text).ok) best = text;
  }
  return best;
}

const negations = (n) => {
  let p = 'approver == "a0"';
  for (let i = 1; i <= Math.min(n, 31); i++) p = `!(${p} || approver == "c${i}") && approver != "b${i}"`;
  for (let i = 32; i <= n; i++) p += ` && approver != "d${i}"`;
  return p;
};
const alternations = (n) => {
  let p = 'approver == "a0"';
  for (let i = 1; i <= Math.min(n, 31); i++) p = `(${p} && approver != "b${i}") || approver == "c${i}"`;
  for (let i = 32; i <= n; i++) p += ` || approver == "d${i}"`;
  return p;
};
const range = (n, f, sep) => Array.from({ length: n }, (_, i) => f(i)).join(sep);
const hostileShapes = {
  "nested negations over approver": negations,
  "nested alternations over approver": alternations,
  "two long conjunctions (implication)": (n) =>
    `(${range(n, (i) => `args.a${i} == ${i}`, " && ")}) || (${range(n, (i) => `args.b${i} == ${i}`, " && ")})`,
  "many bounds on one name (redundancy)": (n) => range(n, (i) => `amount_minor < ${100_000 - i}`, " || "),
  "mixed bounds and failing args": (n) => range(n, (i) => (i % 2 ? `args.n${i} > ${i}` : `uses < ${i}`), " || "),
  "prefixes x suffixes of approver": (n) =>
    range(n, (i) => (i % 2 ? `startsWith(approver, "p${i}")` : `endsWith(approver, "s${i}")`), " || "),
  "approver lists from args": (n) =>
    range(Math.min(n, 3), (i) => `approver in args.l${i}`, " || ") + range(Math.max(0, n - 3), (i) => ` && approver != "x${i}"`, ""),
  "long literal lists": (n) => `tool in [${range(n, (i) => `"t${i}"`, ", ")}] && approver in [${range(n, (i) => `"a${i}"`, ", ")}]`,
  "nesting at the depth limit": (n) =>
    `${"(".repeat(60)}approver == "a" || tool == "t"${")".repeat(60)}${range(n, (i) => ` && args.k${i} != "v"`, "")}`,
  "negated conjunctions with failing parts": (n) => range(n, (i) => `!(args.f${i} > 3 && approver != "e${i}")`, " && "),
  "overlapping tool lists (issue 33)": (n) => range(n, (i) => `tool in ["t${i}", "t${i + 1}", "t${i + 2}"]`, " || "),
  "comparisons of args with args": (n) => range(n, (i) => (i === 0 ? "args.l == args.m" : `lower(args.s${i}) == "x"`), " && "),
};

/** Median nanoseconds of `f` over a few calls (hostile policies can take milliseconds). */
function medianOf(f, samples = 41) {
  for (let i = 0; i < 5; i++) f();
  const times = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - start));
  }
  return times.sort((a, b) => a - b)[Math.floor(samples / 2)];
}

const hostileEnv = { ...base(random(7), {}), approver: "x@example.com", args: { l0: ["a", "b"], l1: [], l2: ["c"] } };
const { approver: _unknown, ...undecided } = hostileEnv;

/** Every measure of one policy text. */
function measure(text) {
  const compiled = compilePolicy(text);
  if (!compiled.ok) throw new Error(`hostile policy does not compile: ${JSON.stringify(compiled.diagnostics[0])}`);
  const policy = compiled.policy;
  const decision = policy.decide(undecided);
  return {
    compile: medianOf(() => compilePolicy(text)),
    lint: medianOf(() => lintPolicy(text)),
    evaluate: medianOf(() => policy.evaluate(hostileEnv)),
    decide: medianOf(() => policy.decide(undecided)),
    residual: decision.outcome === "gated" ? bytes(decision.residual) / bytes(policy.text) : undefined,
  };
}

const us = (ns) => `${(ns / 1000).toFixed(ns < 100_000 ? 2 : 0)} µs`;
const ratio = (r) => (r === undefined ? "-" : r.toFixed(2));
const typical = measure(threshold.ours);
console.log("worst case over a hostile corpus: the slowest shape for each measure (median of 41 calls)");
console.log(
  `  ${pad("size", 10)} ${pad("compile", 24)} ${pad("compile + lint", 24)} ${pad("evaluate", 24)} ${pad("decide, approver unknown", 24)} residual / policy`,
);
console.log(
  `  ${pad("typical", 10)} ${pad(us(typical.compile), 24)} ${pad(us(typical.lint), 24)} ${pad(us(typical.evaluate), 24)} ${pad(us(typical.decide), 24)} ${ratio(typical.residual)}   (threshold policy)`,
);
const worst = { lint: 0, decide: 0, residual: 0, lintText: "" };
for (const size of [1024, 2048, 4096]) {
  const rows = Object.entries(hostileShapes).map(([name, grow]) => {
    const text = largest(grow, size);
    if (text === undefined) throw new Error(`${name}: nothing compiles within ${size} bytes`);
    return { name, text, ...measure(text) };
  });
  const slowest = (key) => rows.reduce((a, b) => ((b[key] ?? 0) > (a[key] ?? 0) ? b : a));
  const cell = (key) => pad(`${us(slowest(key)[key])} (${Object.keys(hostileShapes).indexOf(slowest(key).name) + 1})`, 24);
  if (slowest("lint").lint > worst.lint) worst.lintText = slowest("lint").text;
  worst.lint = Math.max(worst.lint, slowest("lint").lint);
  worst.decide = Math.max(worst.decide, slowest("decide").decide);
  worst.residual = Math.max(worst.residual, slowest("residual").residual ?? 0);
  console.log(
    `  ${pad(`${size / 1024} KiB`, 10)} ${cell("compile")} ${cell("lint")} ${cell("evaluate")} ${cell("decide")} ${ratio(slowest("residual").residual)}`,
  );
}
console.log(
  `  shapes: ${Object.keys(hostileShapes)
    .map((name, i) => `(${i + 1}) ${name}`)
    .join(", ")}\n`,
);

/** Milliseconds of this process's CPU per call of `f`: less sensitive to other processes than the wall clock. */
function cpuMs(f, calls = 21) {
  f();
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls / 1000;
}

// Work bounded by the whole request (issue 33): policies up to 4 KiB against `args` up to 64 KiB,
// decided alone and as delegation chains, each with the work units it was charged.
const LARGE = Array.from({ length: 1024 }, () => Array.from({ length: 27 }, () => 0));
const ADDRESSES = Array.from({ length: 1024 }, (_, i) => `user${i}@example.com`);
const bigArgs = { l: LARGE, m: structuredClone(LARGE), s: "é".repeat(20_000), addresses: ADDRESSES };
// Bodies of 64 KiB made of one or two long strings (issue 50).
const LONG = "a".repeat(32_700);
const longArgs = { s: `${LONG}${LONG}` };
const affixArgs = { s: LONG, t: LONG.split("").join("") };
// A path is at most LIMITS.pathBytesMax bytes, a URL LIMITS.urlBytesMax: longer ones are refused.
const pathArgs = { p: "/a".repeat(LIMITS.pathBytesMax / 2), d: "/a".repeat(LIMITS.pathBytesMax / 2 - 1) };
const urlArgs = { u: `https://docs.example.com/${"a/".repeat(LIMITS.urlBytesMax / 2 - 20)}` };
// The dearest shapes per code unit (decision 0147): letters beyond ASCII that the URL parser escapes
// and the checks decode again, segments that differ only in case, and `file:` URIs read both ways.
const mathUrl = (host) => `https://${host}/${"∂/".repeat((LIMITS.urlBytesMax - 40) / 4)}`;
const unicodeArgs = {
  u: mathUrl("docs.example.com"),
  v: mathUrl("e.com"),
  p: "/∂".repeat(LIMITS.pathBytesMax / 4),
  d: "/A".repeat(LIMITS.pathBytesMax / 2 - 1),
  q: "/a".repeat(LIMITS.pathBytesMax / 2 - 1),
  f: `file://${"/A".repeat(LIMITS.urlBytesMax / 2 - 4)}`,
  g: `file://${"/a".repeat(LIMITS.urlBytesMax / 2 - 5)}`,
};
const stored = (text) => {
  const result = compilePolicy(text, { origin: "stored" });
  if (!result.ok) throw new Error(`${text.slice(0, 60)}: ${JSON.stringify(result.diagnostics[0])}`);
  return result.policy;
};
const repeatWithin = (part, sep) => range(Math.floor(4000 / (part.length + sep.length)), () => part, sep);
const requestShapes = [
  { name: "`args.l == args.l && …` (3.8 KB, 56 KB args; stored)", text: repeatWithin("args.l == args.l", " && "), args: { l: LARGE } },
  { name: "`args.l == args.m` (the dearest policy accepted)", text: "args.l == args.m", args: bigArgs },
  { name: '`lower(args.s) == "x" && …` (stored)', text: repeatWithin('lower(args.s) == "x"', " && "), args: bigArgs },
  { name: "`approver in args.l`, 1,024 addresses", text: "approver in args.l", args: { l: ADDRESSES } },
  { name: "`args.s in args.addresses || …` (stored)", text: repeatWithin("args.s in args.addresses", " || "), args: bigArgs },
  // Issue 50's shapes: functions that read the whole of a long string from `args`, many times.
  { name: "`size(args.s) > 0 && … > 62` (63 terms; stored)", text: range(63, (i) => `size(args.s) > ${i}`, " && "), args: longArgs },
  { name: "`startsWith(args.s, args.s) && …` (stored)", text: repeatWithin("startsWith(args.s, args.s)", " && "), args: longArgs },
  { name: "`endsWith(args.t, args.s) && …` (stored)", text: repeatWithin("endsWith(args.t, args.s)", " && "), args: affixArgs },
  { name: "`pathWithin(args.p, args.d) && …` (stored)", text: repeatWithin("pathWithin(args.p, args.d)", " && "), args: pathArgs },
  { name: '`urlPath(args.u) != "/x" && …` (stored)', text: repeatWithin('urlPath(args.u) != "/x"', " && "), args: urlArgs },
  { name: "`size(args.s) > 0 && … > 2` (the most accepted)", text: range(3, (i) => `size(args.s) > ${i}`, " && "), args: longArgs },
  {
    name: '`urlPath(args.u) != "/x" && …`, `∂` segments (stored)',
    text: repeatWithin('urlPath(args.u) != "/x"', " && "),
    args: unicodeArgs,
  },
  {
    name: "`urlPort(args.u) == 443 && urlScheme(args.u) == …`, `∂`",
    text: 'urlPort(args.u) == 443 && urlScheme(args.u) == "https" && pathNormalize(args.q) in ["/a"]',
    args: unicodeArgs,
  },
  {
    name: '`urlHost(args.u) == "a" && urlHost(args.v) == …` (stored)',
    text: 'urlHost(args.u) == "a" || urlHost(args.v) == "b"',
    args: unicodeArgs,
  },
  {
    name: "`urlWithin(args.f, args.g) || …`, case differs (stored)",
    text: repeatWithin("urlWithin(args.f, args.g)", " || "),
    args: unicodeArgs,
  },
  {
    name: "`pathNormalize(args.p) != …`, `∂` segments (stored)",
    text: repeatWithin('pathNormalize(args.p) != "/"', " && "),
    args: unicodeArgs,
  },
  {
    name: "`pathWithin(args.d, args.q) || …`, case differs (stored)",
    text: repeatWithin("pathWithin(args.d, args.q)", " || "),
    args: unicodeArgs,
  },
  {
    name: "`pathWithin(args.p, args.d) && pathWithin(…)` (stored)",
    text: "pathWithin(args.p, args.d) && pathWithin(args.d, args.p)",
    args: pathArgs,
  },
];
const { approver: _unknownToo, ...bare } = hostileEnv;
console.log("work bounded by the whole request: policies up to 4 KiB, args up to 64 KiB (median of 41 calls)");
console.log(`  ${pad("shape", 58)} ${pad("when written", 20)} ${pad("decide", 12)} ${pad("CPU", 12)} ${pad("units", 9)} outcome`);
let worstRequest = 0;
let worstRequestCpu = 0;
for (const shape of requestShapes) {
  const issued = compilePolicy(shape.text);
  const policy = stored(shape.text);
  const env = { ...bare, args: shape.args };
  const meter = costMeter();
  const outcome = policy.decide(env, meter);
  const ns = medianOf(() => policy.decide(env, costMeter()));
  const cpu = cpuMs(() => policy.decide(env, costMeter())) * 1e6;
  worstRequest = Math.max(worstRequest, ns);
  worstRequestCpu = Math.max(worstRequestCpu, cpu);
  const verdict = outcome.outcome === "deny" && outcome.error !== undefined ? `deny (${outcome.error.code})` : outcome.outcome;
  console.log(
    `  ${pad(shape.name, 58)} ${pad(issued.ok ? "accepted" : issued.diagnostics[0].code, 20)} ${pad(us(ns), 12)} ${pad(us(cpu), 12)} ${pad(meter.spent, 9)} ${verdict}`,
  );
}
const chainShapes = [
  { name: "`args.l == args.m` per link", text: () => "args.l == args.m" },
  { name: "`approver in args.addresses && args.k != …` per link", text: (i) => `approver in args.addresses && args.k != "v${i}"` },
  {
    name: "4 KiB of `args.kN != … || approver != …` per link",
    text: (i) => repeatWithin(`(args.k${i} != "v" || approver != "x${i}@example.com")`, " && "),
  },
];
let worstChain = 0;
let worstChainCpu = 0;
for (const links of [32, 64]) {
  for (const shape of chainShapes) {
    const policies = Array.from({ length: links }, (_, i) => stored(shape.text(i)));
    const args = { ...bigArgs, k: "v", ...Object.fromEntries(Array.from({ length: links }, (_, i) => [`k${i}`, "v"])) };
    const chain = policies.map((policy) => ({ policy, env: { ...bare, args } }));
    const meter = costMeter();
    const outcome = decideChain(chain, meter);
    const ns = medianOf(() => decideChain(chain, costMeter()), 11);
    const cpu = cpuMs(() => decideChain(chain, costMeter()), 11) * 1e6;
    worstChain = Math.max(worstChain, ns);
    worstChainCpu = Math.max(worstChainCpu, cpu);
    console.log(
      `  ${pad(`${links} links: ${shape.name}`, 79)} ${pad(us(ns), 12)} ${pad(us(cpu), 12)} ${pad(meter.spent, 9)} ${outcome.outcome}`,
    );
  }
}
console.log(`  budgets: ${LIMITS.evaluationUnitsMax} units per policy, ${LIMITS.decisionUnitsMax} per decision\n`);

const lintCpu = cpuMs(() => lintPolicy(worst.lintText));
const compileCpu = cpuMs(() => {
  for (let i = 0; i < 1000; i++) compilePolicy(threshold.ours);
});

const minRatio = Math.min(...ratios);
const minGateRatio = Math.min(...gateRatios);
console.log("targets");
console.log(`  evaluation >= 2x cel-js typed on every policy: ${minRatio >= 2 ? "met" : "NOT met"} (lowest ratio ${minRatio.toFixed(1)}x)`);
console.log(
  `  the policy gate >= 2x cel-js on every policy:  ${minGateRatio >= 2 ? "met" : "NOT met"} (lowest ratio ${minGateRatio.toFixed(1)}x)`,
);
console.log(
  `  parse + check + compile median < 10 µs:        ${compileNs < 10_000 ? "met" : "NOT met"} (${(compileNs / 1000).toFixed(2)} µs)`,
);
console.log(`  hostile compile + lint <= 20 ms up to 4 KiB:   ${worst.lint <= 20e6 ? "met" : "NOT met"} (${us(worst.lint)})`);
console.log(`  hostile decide <= 1 ms up to 4 KiB:            ${worst.decide <= 1e6 ? "met" : "NOT met"} (${us(worst.decide)})`);
console.log(
  `  residual no larger than its policy:            ${worst.residual <= 1 ? "met" : "NOT met"} (largest ratio ${worst.residual.toFixed(2)})`,
);
console.log(
  `  any policy, any args <= 64 KiB decides <= 1 ms: ${worstRequest <= 1e6 ? "met" : "NOT met"} (${us(worstRequest)}; CPU ${us(worstRequestCpu)})`,
);
console.log(
  `  a 64-link chain of them decides <= 5 ms:        ${worstChain <= 5e6 ? "met" : "NOT met"} (${us(worstChain)}; CPU ${us(worstChainCpu)})`,
);
console.log(
  `  CPU time (against the load): slowest compile + lint ${lintCpu.toFixed(2)} ms, threshold compile ${compileCpu.toFixed(2)} µs (mean)`,
);
if (worst.residual > 1) process.exit(1);
if (disagreements > 0) {
  console.log(`\n${disagreements} disagreements between engines`);
  process.exit(1);
}
