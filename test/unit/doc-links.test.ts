// The README and docs/ link to each other by relative paths (issue 32 item 6): every such link
// names a file of the repository, and every `#anchor` a heading of its target (GitHub's slugs).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";

const DOCS = ["README.md", ...readdirSync(join(REPO_ROOT, "docs")).map((f) => `docs/${f}`), "test/fixtures/api-samples/README.md"].filter(
  (f) => f.endsWith(".md"),
);

/** The text outside code: fenced blocks and inline code spans removed. */
const prose = (md: string) => md.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a document's headings (those outside fenced code). */
function anchorsOf(md: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of md.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) anchors.add(slug(line.replace(/^#+ /, "")));
  }
  return anchors;
}

interface Link {
  readonly from: string;
  readonly target: string;
}

function relativeLinks(file: string): Link[] {
  const text = prose(readFileSync(join(REPO_ROOT, file), "utf8"));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/i.test(t))
    .map((target) => ({ from: file, target }));
}

/** What is wrong with a link, or null. */
function problem(link: Link): string | null {
  const [path, anchor] = link.target.split("#") as [string, string | undefined];
  const file = path === "" ? join(REPO_ROOT, link.from) : resolve(REPO_ROOT, dirname(link.from), path);
  const inRepo = relative(REPO_ROOT, file);
  if (inRepo.startsWith("..")) return `${link.from}: ${link.target} leaves the repository`;
  if (!existsSync(file)) return `${link.from}: ${link.target}: no such file`;
  if (anchor && file.endsWith(".md") && !anchorsOf(readFileSync(file, "utf8")).has(anchor))
    return `${link.from}: ${link.target}: ${inRepo} has no heading #${anchor}`;
  return null;
}

describe("relative links of the README and docs/", () => {
  const links = DOCS.flatMap(relativeLinks);

  it("the README links every document of docs/", () => {
    const fromReadme = new Set(links.filter((l) => l.from === "README.md").map((l) => l.target.split("#")[0]));
    for (const doc of DOCS.filter((d) => d.startsWith("docs/"))) expect(fromReadme, doc).toContain(doc);
  });

  it("name files of the repository and headings of them", () => {
    expect(links.length).toBeGreaterThan(20);
    expect(links.map(problem).filter(Boolean)).toEqual([]);
  });

  it("slugs as GitHub makes them, and a wrong anchor or file is caught", () => {
    expect(slug("Scaling out: workers and the queue")).toBe("scaling-out-workers-and-the-queue");
    expect(slug("The server's keys in `extra`")).toBe("the-servers-keys-in-extra");
    expect(slug("Metrics (Prometheus)")).toBe("metrics-prometheus");
    expect(problem({ from: "README.md", target: "docs/design.md#no-such-heading" })).toContain("no heading");
    expect(problem({ from: "README.md", target: "docs/nothing.md" })).toContain("no such file");
    expect(problem({ from: "docs/design.md", target: "../../elsewhere.md" })).toContain("leaves the repository");
  });
});
