package history

const mib = 1 << 20
