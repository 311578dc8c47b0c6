/* Functions for the include/exclude/exclude-file tests. */
int keep_me(int x) { return x + 1; }
int drop_me(int x) { return x - 1; }
int also_keep(int x) { return keep_me(x) * drop_me(x); }
