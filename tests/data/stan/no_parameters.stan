data {
  int N;
}
model {
}
