#include <stdio.h>
/* Digits by unsigned division and remainder. */
int main(void) {
  unsigned n = 9051, d = 0, s = 0;
  while (n) { s += n % 10; n /= 10; d++; }
  printf("digits = %u, sum = %u\n", d, s);
  return 0;
}
