/**
 * A LiteSVM transaction error written as agave's `TransactionError` serializes it: unit variants as
 * strings (`"BlockhashNotFound"`), the others as one-key maps (`{"InstructionError":[0,{"Custom":1}]}`).
 *
 * @module
 */
import type { FailedTransactionMetadata } from 'litesvm';

// LiteSVM's native enums are `const enum`s: their names are not at run time, so they are listed here in order.
const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound',
  'InsufficientFundsForFee', 'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound',
  'CallChainTooDeep', 'MissingSignatureForFee', 'InvalidAccountIndex', 'SignatureFailure',
  'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance', 'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit',
  'CommitCancelled',
] as const;

const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged',
  'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync',
  'InvalidError', 'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId', 'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded',
  'InvalidSeeds', 'InvalidRealloc', 'ComputationalBudgetExceeded', 'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable',
  'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow',
  'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded', 'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
] as const;

type Failure = ReturnType<FailedTransactionMetadata['err']>;

function instructionError(err: unknown): unknown {
  if (typeof err === 'number') return INSTRUCTION_ERRORS[err] ?? 'InvalidError';
  if (err !== null && typeof err === 'object' && 'code' in err) return { Custom: (err as { code: number }).code };
  if (err !== null && typeof err === 'object' && 'msg' in err) return { BorshIoError: (err as { msg: string }).msg };
  return 'InvalidError';
}

/** agave's JSON of a transaction error. */
export function transactionErrorJson(err: Failure): unknown {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? 'SanitizeFailure';
  if ('err' in err && typeof err.err === 'function') return { InstructionError: [err.index, instructionError(err.err())] };
  if ('index' in err) return { DuplicateInstruction: err.index };
  if ('accountIndex' in err && err.constructor.name.includes('Rent')) return { InsufficientFundsForRent: { account_index: err.accountIndex } };
  if ('accountIndex' in err) return { ProgramExecutionTemporarilyRestricted: { account_index: err.accountIndex } };
  return 'SanitizeFailure';
}

/** A fieldless transaction error by name (for errors the node finds before LiteSVM runs). */
export type TransactionErrorName = (typeof TRANSACTION_ERRORS)[number];

/** agave's `Display` of the transaction errors a client meets most; others show their variant name. */
const DISPLAY: Readonly<Record<string, string>> = {
  AccountInUse: 'Account in use',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
};

const INSTRUCTION_DISPLAY: Readonly<Record<string, string>> = {
  InsufficientFunds: 'insufficient funds for instruction',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  ProgramFailedToComplete: 'Program failed to complete',
};

/** How agave words a transaction error (`Transaction simulation failed: <this>`). */
export function transactionErrorMessage(err: unknown): string {
  if (typeof err === 'string') return DISPLAY[err] ?? err;
  if (err !== null && typeof err === 'object' && 'InstructionError' in err) {
    const [index, inner] = (err as { InstructionError: [number, unknown] }).InstructionError;
    let text: string;
    if (typeof inner === 'string') text = INSTRUCTION_DISPLAY[inner] ?? inner;
    else if (inner !== null && typeof inner === 'object' && 'Custom' in inner) text = `custom program error: 0x${(inner as { Custom: number }).Custom.toString(16)}`;
    else text = JSON.stringify(inner);
    return `Error processing Instruction ${index}: ${text}`;
  }
  return JSON.stringify(err);
}
