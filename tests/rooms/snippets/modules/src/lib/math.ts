// Angle-bracket type assertions only parse when the jsx transform is off (.ts).
export function total(values: number[]): number {
  return values.reduce((sum, v) => sum + <number>v, 0);
}

export const double = (n: number): number => (<number>n) * 2;
