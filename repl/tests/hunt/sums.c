#include <stdio.h>
/* Sums of squares: no division, nothing the planted passes touch. */
int main(void) {
  long s = 0;
  for (int i = -20; i <= 20; i++) s += (long)i * i;
  printf("sum = %ld\n", s);
  return 0;
}
