// A modal dialog on the native <dialog>: opening it moves focus into it (to its heading, which
// names it), the page behind is inert while it is open, Escape closes it, and closing gives focus
// back to the control that opened it. Shared by Switch wallet and any panel that asks for a
// decision on its own (the purchase panel can be wrapped in it).
import { useEffect, useRef, type ReactNode } from 'react';

export function Dialog({ labelledBy, onClose, testId, children }: { labelledBy: string; onClose: () => void; testId?: string; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
    dialog.showModal();
    document.getElementById(labelledBy)?.focus();
    return () => {
      dialog.close();
      opener?.focus();
    };
  }, [labelledBy]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={labelledBy}
      data-testid={testId}
      onCancel={(e) => {
        // Escape: the owner decides (it unmounts the dialog, which closes it and restores focus).
        e.preventDefault();
        onClose();
      }}
    >
      {children}
    </dialog>
  );
}
