/** What the anynines providers log in with, per data service (the `anyninesCredentials` secret setting). */
export interface AnyninesCredentials {
  serviceBroker: { username: string; password: string };
  backupManager?: { username: string; password: string };
}
