// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title TollgateSeed
/// @notice The contract the Tollgate devnet deploys at startup: it emits indexed events (one call can
///         emit thousands, to push eth_getLogs past its result limit), reverts on demand with a reason
///         string, a panic or a custom error, and reports the gas an eth_call was given.
/// @dev Compiled ahead of time by compile-seed-contract.ts into seed-contract.ts; the runtime never needs solc.
contract TollgateSeed {
    /// @notice Emitted once per ping; `n` counts every ping the contract ever emitted, from 0.
    event Ping(address indexed from, uint256 indexed n, bytes32 tag);

    /// @notice The custom error of deny().
    error Denied(address caller, uint256 code);

    /// @notice How many Ping events were emitted so far.
    uint256 public pings;

    /// @notice Emits `count` Ping events in this one transaction.
    function ping(uint256 count, bytes32 tag) external {
        uint256 first = pings;
        for (uint256 i = 0; i < count; ++i) {
            emit Ping(msg.sender, first + i, tag);
        }
        pings = first + count;
    }

    /// @notice Reverts with `Error("tollgate: seeded revert")` when `yes` is true.
    function fail(bool yes) external pure returns (bool) {
        require(!yes, "tollgate: seeded revert");
        return true;
    }

    /// @notice Fails an assertion: reverts with `Panic(0x01)`.
    function panic() external pure returns (bool) {
        bool ok = false;
        assert(ok);
        return ok;
    }

    /// @notice Reverts with the custom error `Denied(msg.sender, code)`.
    function deny(uint256 code) external view {
        revert Denied(msg.sender, code);
    }

    /// @notice The gas left when the call starts: shows the gas an eth_call was actually given.
    function gasLeft() external view returns (uint256) {
        return gasleft();
    }
}
