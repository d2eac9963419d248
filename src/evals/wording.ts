/** Small pieces of message wording shared by the commands' output. */

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
