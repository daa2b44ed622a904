/**
 * Pinned name → key directory mapping (mutex family, no namespace). Changing any of these is
 * a breaking change: processes on the old and new versions would use different files.
 */
export const GOLDEN_KEYS: readonly (readonly [name: string, key: string])[] = [
  ['', 'mutex.736axzszd6ujbspwk7htfwyv5m'],
  ['orders', 'mutex.orders.ozhwpo7m6epkhsxcm7eoaeklqv'],
  ['Orders', 'mutex.orders.5efnxio6dak2qnfvhbd4ttiphm'],
  ['ORDERS', 'mutex.orders.nqggforde2nxx7aq3waoqrgys5'],
  ['../../etc/passwd', 'mutex.______etc_passwd.wbnbzvzh6p5v5ggirtfj5q6mco'],
  ['Ünïcödé 🔒 名前', 'mutex._n_c_d_______.yairmnp2s7zsn5tpzfvxeqhb5n'],
  ['a/b', 'mutex.a_b.erg2b3oiott4zzvzwe75xqqtoc'],
  ['..', 'mutex.__.4ecupvjwulsa4hcvcoth744ynt'],
  ['\0', 'mutex._.5dni4f3zv2fxlrehbhsel5em5i'],
  [' ', 'mutex._.34pytyhyus2f5ftaydyljpfbnx'],
];
