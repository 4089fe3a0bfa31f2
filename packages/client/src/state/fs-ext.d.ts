/** The part of fs-ext (flock(2) for Node; it ships no types) that the state file lock uses. */
declare module 'fs-ext' {
  const fsExt: { flockSync: (fd: number, flags: 'sh' | 'ex' | 'shnb' | 'exnb' | 'un') => void };
  export default fsExt;
}
