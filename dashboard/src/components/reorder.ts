import { useState } from 'preact/hooks';

/**
 * Reordering a list by dragging: the item being dragged, the props of an item's handle (what is
 * picked up) and of an item as a drop target (what it is dropped on: `place(id, index)` then moves
 * the dragged item to that index). The buttons that move items stay beside it for the keyboard.
 */
export function useReorder(enabled: boolean, place: (id: number, index: number) => void) {
  const [dragged, setDragged] = useState<number | null>(null);
  return {
    dragged,
    handle: (id: number) => ({
      draggable: enabled,
      title: enabled ? 'Drag to reorder' : undefined,
      onDragStart: (e: DragEvent) => {
        setDragged(id);
        e.dataTransfer?.setData('text/plain', String(id));
      },
      onDragEnd: () => setDragged(null),
    }),
    target: (id: number, index: number) => ({
      onDragOver: (e: DragEvent) => {
        if (dragged !== null) e.preventDefault();
      },
      onDrop: (e: DragEvent) => {
        e.preventDefault();
        if (dragged !== null && dragged !== id) place(dragged, index);
        setDragged(null);
      },
    }),
  };
}
