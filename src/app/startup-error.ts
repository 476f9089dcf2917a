// A startup failure carrying the reference's message and exit code; main logs it and exits.
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'StartupError';
  }
}
