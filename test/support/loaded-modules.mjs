// Loaded into a child process (--import): at exit, writes to TEST_LOADED_MODULES_FILE the files of
// the OpenTelemetry packages the process loaded (the CommonJS module cache, where Node keeps a
// package imported with import() too), as a JSON array: the tests see what was loaded, not what
// the code meant to load.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const file = process.env.TEST_LOADED_MODULES_FILE;
const cache = createRequire(import.meta.url).cache;
if (file)
  process.on("exit", () => {
    writeFileSync(file, JSON.stringify(Object.keys(cache).filter((path) => path.includes("@opentelemetry"))));
  });
