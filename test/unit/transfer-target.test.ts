// The target of `transfer --to URL` named in messages: its password masked in the URL shown, and
// in any text a driver or server sends back, however the password is written in the URL.
import { describe, expect, it } from "vitest";
import { shownUrl, withoutPassword } from "../../src/warehouse/transfer-target.ts";

describe("the --to URL in messages", () => {
  it("shows the URL with its password as ***, the rest as written", () => {
    expect(shownUrl("postgres://apm:s3cret-pw@db.example:5432/warehouse?sslmode=require")).toBe(
      "postgres://apm:***@db.example:5432/warehouse?sslmode=require",
    );
    expect(shownUrl("postgresql://apm:pa%2Fss%40word@db/w")).toBe("postgresql://apm:***@db/w");
    // No password: nothing to mask, an '@' of the path or query stays.
    expect(shownUrl("postgres://apm@db:5432/w")).toBe("postgres://apm@db:5432/w");
    expect(shownUrl("postgres://db:5432/w?application_name=a@b")).toBe("postgres://db:5432/w?application_name=a@b");
  });

  it("masks a password holding an unescaped '@' whole: the driver reads it up to the last '@' of the host part", () => {
    const url = "postgres://apm:p@ss-w0rd@db.example:5432/warehouse";
    expect(decodeURIComponent(new URL(url).password)).toBe("p@ss-w0rd");
    expect(shownUrl(url)).toBe("postgres://apm:***@db.example:5432/warehouse");
    expect(withoutPassword("connecting with p@ss-w0rd failed", url)).toBe("connecting with *** failed");
  });

  it("masks the password of a text as written in the URL and as it decodes", () => {
    const url = "postgres://apm:pa%2Fss%40word@db/w";
    expect(withoutPassword("sent pa/ss@word, then pa%2Fss%40word", url)).toBe("sent ***, then ***");
    expect(withoutPassword("nothing secret here", "postgres://apm@db/w")).toBe("nothing secret here");
  });
});
