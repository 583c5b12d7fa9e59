// The hostile app's escapes, tried by a package from the npm registry that package.json names
// (sneaky-lib: tests/rooms/packages/sneaky-lib): its code runs as the
// frame loads it, with the require the server resolved for it.
import escapes from "sneaky-lib";

export default async function extraChecks(): Promise<[string, string][]> {
  return escapes();
}
