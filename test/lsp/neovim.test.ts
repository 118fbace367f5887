// The Neovim set-up of docs/lsp.md, run as a user runs it: a real headless Neovim loads the page's
// Lua block as its init.lua, opens a broken policy and a broken family in a project that installs
// the CLI, and the language server's diagnostics must arrive in Neovim.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli, root } from "../cli/run-cli.js";

/** Neovim's version line, or undefined when no `nvim` is installed. */
const nvimVersion = ((): string | undefined => {
  const probe = spawnSync("nvim", ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? probe.stdout.split("\n")[0] : undefined;
})();

/** The first Lua block of the page's Neovim section: the set-up a user copies. */
function documentedSetUp(): string {
  const page = readFileSync(join(root, "docs", "lsp.md"), "utf8");
  const section = page.slice(page.indexOf("## Neovim"));
  const block = /```lua\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block).toBeDefined();
  return block!;
}

/** Opens each file in turn, waits (bounded) for its diagnostics, and writes them all as JSON; Lua for Neovim 0.7 and later. */
const HARNESS = `
local out = {}
for _, file in ipairs(vim.split(vim.env.AUTHORITY_FILES, ",")) do
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then code = d.user_data.lsp.code end
    table.insert(found, { line = d.lnum, column = d.col, severity = d.severity, code = code or vim.NIL, message = d.message })
  end
  table.insert(out, { file = file, filetype = vim.bo[buf].filetype, clients = #vim.lsp.get_active_clients(), diagnostics = found })
end
vim.fn.writefile({ vim.fn.json_encode(out) }, vim.env.AUTHORITY_OUT)
vim.cmd("qa!")
`;

interface Opened {
  readonly file: string;
  readonly filetype: string;
  readonly clients: number;
  readonly diagnostics: readonly { line: number; column: number; severity: number; code: string | null; message: string }[];
}

// Under CI, where .ci/run installs Debian's neovim, a missing `nvim` fails instead of skipping.
if (nvimVersion === undefined && process.env["CI"] === "true") {
  describe("the Neovim set-up of docs/lsp.md", () => {
    it("runs under CI, where Neovim is required", () => {
      throw new Error("the editor suite must run under CI: `nvim` is not installed (apt-get install -y neovim)");
    });
  });
}

describe.skipIf(nvimVersion === undefined)(
  `the Neovim set-up of docs/lsp.md in ${nvimVersion ?? "Neovim (not installed: skipped)"}`,
  () => {
    const scratch = mkdtempSync(join(tmpdir(), "authority-neovim-"));
    const project = join(scratch, "project");
    let opened: Opened[];

    beforeAll(() => {
      buildCli();
      // A project that installs the CLI: its bin, where `npx authority` finds it without a registry.
      mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
      mkdirSync(join(project, "policies"));
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "policies", private: true }));
      symlinkSync(join(root, "cli", "bin", "authority.js"), join(project, "node_modules", ".bin", "authority"));
      writeFileSync(join(project, "policies", "limits.policy"), 'amount_minor <= 5000 && currency = "EUR"\n');
      writeFileSync(join(project, "policies", "broken.yaml"), "id: broken\nversion: 1\n");
      const init = join(scratch, "init.lua");
      writeFileSync(init, documentedSetUp());
      writeFileSync(join(scratch, "harness.lua"), HARNESS);
      const home = join(scratch, "home");
      const env = {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: join(home, "config"),
        XDG_DATA_HOME: join(home, "data"),
        XDG_STATE_HOME: join(home, "state"),
        XDG_CACHE_HOME: join(home, "cache"),
        npm_config_offline: "true",
        npm_config_update_notifier: "false",
        AUTHORITY_FILES: [join(project, "policies", "limits.policy"), join(project, "policies", "broken.yaml")].join(","),
        AUTHORITY_OUT: join(scratch, "diagnostics.json"),
      };
      const run = spawnSync("nvim", ["--headless", "-u", init, "-c", `luafile ${join(scratch, "harness.lua")}`], {
        cwd: project,
        env,
        encoding: "utf8",
        timeout: 180_000,
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      opened = JSON.parse(readFileSync(join(scratch, "diagnostics.json"), "utf8")) as Opened[];
    }, 200_000);

    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it("gives `.policy` files the filetype policy and starts one server for the project", () => {
      expect(opened.map((o) => o.filetype)).toEqual(["policy", "yaml"]);
      expect(opened.map((o) => o.clients)).toEqual([1, 1]);
    });

    it("shows a broken policy's error, with lint's code, at its place", () => {
      const [policy] = opened;
      const error = policy!.diagnostics.find((d) => d.severity === 1);
      expect(error, JSON.stringify(policy)).toBeDefined();
      expect(error!.code).toBe("policy/unexpected-character");
      expect(error!.line).toBe(0);
      expect(error!.column).toBe("amount_minor <= 5000 && currency ".length);
    });

    it("shows a broken family's errors", () => {
      const family = opened[1]!;
      expect(family.diagnostics.filter((d) => d.severity === 1).length, JSON.stringify(family)).toBeGreaterThan(0);
    });
  },
);
