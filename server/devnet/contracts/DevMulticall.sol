// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The devnet's batch-call contract. The devnet installs its runtime code at the address where
/// Multicall3 lives on every public chain (0xcA11bde05977b3631167028862bE2a173976CA11), so viem's
/// multicall works on the devnet as on mainnet. It implements, with Multicall3's ABI, the
/// functions the service calls: aggregate3, getEthBalance and getBlockNumber.
contract DevMulticall {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory data) = calls[i].target.call(calls[i].callData);
            require(ok || calls[i].allowFailure, "DevMulticall: call failed");
            results[i] = Result(ok, data);
        }
    }

    function getEthBalance(address account) external view returns (uint256) {
        return account.balance;
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }
}
