#include <stdio.h>
/* Halves and quarters of negative numbers: C rounds them toward zero. */
static int quarter(int x) { return x / 4; }
int main(void) {
  int s = 0;
  for (int i = -9; i <= 9; i++) s = s * 3 + quarter(i);
  printf("quarters = %d\n", s);
  return 0;
}
