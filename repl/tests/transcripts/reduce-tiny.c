unsigned scale(unsigned x) { return x / 10 + 1; }
int unused(int y) { return y * 3; }
