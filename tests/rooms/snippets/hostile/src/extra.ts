// More attempts, for a variant of this app: tests/rooms/snippets/hostile-libraries replaces this
// file with the same escapes tried through the curated libraries.
export default async function extraChecks(): Promise<[string, string][]> {
  return [];
}
